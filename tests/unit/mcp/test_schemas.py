"""Wire-safe names and schemas for MCP tools."""

from __future__ import annotations

from rhema_lsp.mcp.schemas import MAX_NAME, exposed_name, sanitize_schema

NESTED = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "Point": {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
        },
        "Tree": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Tree"}}},
    },
    "properties": {
        "point": {"$ref": "#/$defs/Point"},
        "tree": {"$ref": "#/$defs/Tree"},
        "label": {"type": ["string", "null"], "const": "x"},
        "flag": True,
    },
    "required": ["point", "ghost"],
}


def test_names_are_server_and_tool_made_wire_safe() -> None:
    assert exposed_name("time", "get_current_time") == "time__get_current_time"
    assert exposed_name("my server", "do.it/now") == "my_server__do_it_now"
    assert exposed_name("1st", "x").startswith("_")
    long = exposed_name("s" * 40, "t" * 40)
    assert len(long) == MAX_NAME
    assert long != exposed_name("s" * 40, "t" * 41)


def test_refs_are_inlined_and_required_names_only_properties() -> None:
    schema = sanitize_schema(NESTED, "anthropic")
    assert isinstance(schema, dict)
    assert "$defs" not in schema and "$schema" not in schema
    properties = schema["properties"]
    assert isinstance(properties, dict)
    assert properties["point"] == NESTED["$defs"]["Point"]  # type: ignore[index]
    assert properties["flag"] == {}
    assert schema["required"] == ["point"]
    assert "$ref" not in str(schema)  # the cycle ends


def test_gemini_gets_only_the_keywords_it_documents() -> None:
    schema = sanitize_schema(NESTED, "gemini")
    assert isinstance(schema, dict)
    properties = schema["properties"]
    assert isinstance(properties, dict)
    assert properties["label"] == {"type": "string", "nullable": True, "enum": ["x"]}


def test_a_top_level_that_is_not_an_object_becomes_one() -> None:
    assert sanitize_schema({"anyOf": [{"type": "string"}]}, "openai") == {
        "type": "object",
        "properties": {},
        "required": [],
    }
    assert sanitize_schema(None, "openai") == {"type": "object", "properties": {}, "required": []}
