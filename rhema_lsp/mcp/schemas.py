"""MCP tools as the model sees them: a wire-safe name and a wire-safe schema.

A tool ``get_time`` of the server ``clock`` is offered as ``clock__get_time``.
Characters no wire accepts become ``_``, a name starts with a letter or
``_``, and one longer than 64 characters keeps its head and a hash.

A server's ``inputSchema`` is JSON Schema of any draft; each wire takes less
(see ``rhema_lsp/providers``: OpenAI's ``parameters``, Anthropic's
``input_schema``, Gemini's ``parametersJsonSchema``). For every wire the
top level becomes ``{"type": "object", ...}``, local ``$ref``\\ s are inlined
(a cycle ends in ``{}`` after :data:`MAX_DEPTH` levels) and ``$defs``,
``$schema``, ``$id`` and ``$comment`` dropped, boolean sub-schemas become
``{}``, ``required`` names only declared properties. For ``gemini`` only the
keywords it documents are kept, ``const`` becomes ``enum``, a list ``type``
becomes ``anyOf``, ``oneOf`` becomes ``anyOf`` and ``allOf`` is merged.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from rhema_lsp.engine.messages import JsonValue

__all__ = ["MAX_DEPTH", "MAX_NAME", "exposed_name", "sanitize_schema"]

MAX_NAME = 64
MAX_DEPTH = 12
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_DROPPED = frozenset({"$defs", "definitions", "$schema", "$id", "$comment", "$anchor"})
_GEMINI_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "anyOf",
        "properties",
        "additionalProperties",
        "required",
        "default",
        "propertyOrdering",
    }
)
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def exposed_name(server: str, tool: str) -> str:
    """The name ``tool`` of ``server`` is offered under (``server__tool``, made
    wire-safe)."""
    name = _UNSAFE_CHARS.sub("_", f"{server}__{tool}")
    if not (name[0].isalpha() or name[0] == "_"):
        name = f"_{name}"
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


def sanitize_schema(schema: object, wire: str) -> JsonValue:
    """``schema`` reduced to what ``wire`` accepts (see the module docstring).

    Parameters
    ----------
    schema
        The tool's ``inputSchema`` as the server sent it.
    wire
        ``openai``, ``anthropic`` or ``gemini`` (anything else is treated as
        ``openai``).
    """
    root: Mapping[str, Any] = schema if isinstance(schema, Mapping) else {}
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        table = root.get(key)
        if isinstance(table, Mapping):
            defs.update({f"#/{key}/{name}": value for name, value in table.items()})
    cleaned = _clean(root, defs, wire == "gemini", 0)
    assert isinstance(cleaned, dict)
    cleaned["type"] = "object"
    properties = cleaned.get("properties")
    if not isinstance(properties, dict):
        properties = cleaned["properties"] = {}
    for combinator in ("anyOf", "oneOf", "allOf"):
        # a top-level union is not an object schema any wire accepts
        cleaned.pop(combinator, None)
    required = cleaned.get("required")
    cleaned["required"] = (
        [name for name in required if isinstance(name, str) and name in properties]
        if isinstance(required, list)
        else []
    )
    return cleaned


def _clean(node: object, defs: Mapping[str, Any], gemini: bool, depth: int) -> JsonValue:
    if not isinstance(node, Mapping):
        return {}
    if depth > MAX_DEPTH:
        return {}
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref)
        merged = {**(target if isinstance(target, Mapping) else {}), **node}
        merged.pop("$ref")
        return _clean(merged, defs, gemini, depth + 1)
    out: dict[str, JsonValue] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {
                str(name): _clean(sub, defs, gemini, depth + 1) for name, sub in value.items()
            }
        elif key in ("items", "additionalProperties", "not") and isinstance(value, Mapping):
            out[key] = _clean(value, defs, gemini, depth + 1)
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [_clean(sub, defs, gemini, depth + 1) for sub in value]
        elif key in ("items", "not"):
            out[key] = {}
        else:
            out[key] = _json(value)
    if "required" in out:
        properties = out.get("properties")
        names = properties if isinstance(properties, dict) else {}
        listed = out["required"]
        out["required"] = (
            [n for n in listed if isinstance(n, str) and n in names]
            if isinstance(listed, list)
            else []
        )
    return _for_gemini(out) if gemini else out


def _for_gemini(node: dict[str, JsonValue]) -> dict[str, JsonValue]:
    if "const" in node:
        node.setdefault("enum", [node["const"]])
    if "oneOf" in node:
        node.setdefault("anyOf", node["oneOf"])
    all_of = node.pop("allOf", None)
    if isinstance(all_of, list):
        for part in all_of:
            if not isinstance(part, dict):
                continue
            for key, value in part.items():
                if key == "properties" and isinstance(value, dict):
                    current = node.setdefault("properties", {})
                    if isinstance(current, dict):
                        current.update({k: v for k, v in value.items() if k not in current})
                elif key == "required" and isinstance(value, list):
                    current_required = node.setdefault("required", [])
                    if isinstance(current_required, list):
                        current_required.extend(v for v in value if v not in current_required)
                else:
                    node.setdefault(key, value)
    kind = node.get("type")
    if isinstance(kind, list):
        types = [t for t in kind if isinstance(t, str)]
        node.pop("type")
        if "null" in types and len(types) == 2:
            node["type"] = next(t for t in types if t != "null")
            node["nullable"] = True
        elif len(types) == 1:
            node["type"] = types[0]
        elif types:
            node["anyOf"] = [{"type": t} for t in types]
    return {key: value for key, value in node.items() if key in _GEMINI_KEYWORDS}


def _json(value: object) -> JsonValue:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return str(value)
