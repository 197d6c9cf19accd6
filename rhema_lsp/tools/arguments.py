"""A tool's arguments as one pydantic model: schema, validation and defaults.

Each tool subclasses :class:`ToolArguments` once (see
:mod:`~rhema_lsp.tools.specs`); its fields are the only statement of the
argument names, types, bounds, defaults and descriptions. From the model:

- :meth:`~ToolArguments.spec` is the :class:`ToolSpec` offered to the model,
  whose schema is kept *plain* so every provider wire takes it: ``type``,
  ``properties``, ``required``, ``additionalProperties: false`` at the top,
  and per property only ``type``, ``description``, ``minimum``, ``maximum``,
  ``items`` and ``enum``. No ``title``, ``default``, ``$defs``/``$ref`` or
  ``anyOf`` (some Gemini versions reject them): an optional field is typed as
  its non-null type, and a default is said in the description instead. A
  list of small models (``update_plan``'s entries) is inlined as ``items``
  of ``type: object`` with its own ``properties``, ``required`` and
  ``additionalProperties: false``.
- :meth:`~ToolArguments.parse` checks a call's arguments strictly (no
  ``"3"`` for 3, no ``"yes"`` for true; a whole float such as ``3.0`` is an
  integer), treats ``null`` as "not given", ignores unknown names, and turns
  every problem into one :class:`~rhema_lsp.tools.errors.ToolError` naming
  the tool and each argument, which the resolver returns in-band.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator
from pydantic_core import ErrorDetails

from rhema_lsp.engine.messages import JsonValue
from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.tools.errors import ToolError

__all__ = ["Integer", "ToolArguments"]

_PROPERTY_KEYWORDS = frozenset({"type", "description", "minimum", "maximum", "items", "enum"})


def _whole_float_as_int(value: object) -> object:
    """``3.0`` as ``3``: JSON has one number type and some models write floats."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Integer = Annotated[int, BeforeValidator(_whole_float_as_int)]
"""An integer argument that also takes a whole float (``3.0``), never a bool or string."""


class ToolArguments(BaseModel):
    """The base of every tool's argument model.

    Subclasses set :attr:`tool_name` and :attr:`tool_description` and declare
    the arguments as fields (``Field(description=..., ge=..., le=...)``; a
    Python keyword takes an ``alias``).

    Attributes
    ----------
    tool_name
        The tool's name as the model calls it.
    tool_description
        What the tool does, as the model is told.
    """

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    tool_name: ClassVar[str]
    tool_description: ClassVar[str]

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data

    @classmethod
    def parse(cls, raw: JsonValue) -> Self:
        """Validate a call's arguments.

        Parameters
        ----------
        raw
            The call's decoded JSON arguments.

        Returns
        -------
        Self
            The arguments with defaults filled in.

        Raises
        ------
        ToolError
            Naming the tool and every argument that is missing or wrong.
        """
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(_problem(error) for error in exc.errors())
            raise ToolError(f"{cls.tool_name}: {problems}") from None

    @classmethod
    def parameters(cls) -> dict[str, JsonValue]:
        """The plain JSON schema of the arguments (see the module docstring)."""
        schema = cls.model_json_schema(by_alias=True)
        defs = schema.get("$defs", {})
        properties: dict[str, JsonValue] = {}
        for key, info in cls.model_fields.items():
            name = info.alias or key
            plain = _plain(schema["properties"][name], defs)
            if not info.is_required() and info.default is not None:
                said = f"Default {_shown(info.default)}."
                described = plain.get("description")
                plain["description"] = f"{described} {said}" if described else said
            properties[name] = plain
        return {
            "type": "object",
            "properties": properties,
            "required": list(schema.get("required", [])),
            "additionalProperties": False,
        }

    @classmethod
    def spec(cls) -> ToolSpec:
        """The tool as it is offered to the model."""
        return ToolSpec(
            name=cls.tool_name, description=cls.tool_description, parameters=cls.parameters()
        )


def _plain(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, JsonValue]:
    """``node`` with only the plain keywords; ``anyOf [X, null]`` becomes
    ``X``, and a ``$ref`` to a model its inlined object."""
    options = [o for o in node.get("anyOf", []) if o != {"type": "null"}]
    if len(options) == 1:
        node = {**options[0], **{k: v for k, v in node.items() if k != "anyOf"}}
    ref = node.get("$ref")
    if isinstance(ref, str):
        model = defs[ref.rsplit("/", 1)[-1]]  # its docstring is for the reader, not the model
        node = {
            **{k: v for k, v in model.items() if k != "description"},
            **{k: v for k, v in node.items() if k != "$ref"},
        }
    plain: dict[str, JsonValue] = {
        key: value for key, value in node.items() if key in _PROPERTY_KEYWORDS
    }
    items = node.get("items")
    if isinstance(items, dict):
        plain["items"] = _plain(items, defs)
    fields = node.get("properties")
    if isinstance(fields, dict):
        plain["properties"] = {name: _plain(field, defs) for name, field in fields.items()}
        plain["required"] = list(node.get("required", []))
        plain["additionalProperties"] = False
    return plain


def _shown(default: object) -> str:
    if isinstance(default, float) and default.is_integer():
        default = int(default)
    return json.dumps(default)


_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
}


def _problem(error: ErrorDetails) -> str:
    """One validation error in the resolver's words."""
    kind = error["type"]
    context = error.get("ctx", {})
    if not error["loc"]:
        return "arguments must be a JSON object"
    name = repr(".".join(str(part) for part in error["loc"]))
    if kind == "missing":
        return f"missing required argument {name}"
    if kind in _EXPECTED:
        return f"argument {name} must be {_EXPECTED[kind]}"
    if kind == "greater_than_equal":
        return f"argument {name} must be at least {_shown(context['ge'])}"
    if kind == "less_than_equal":
        return f"argument {name} must be at most {_shown(context['le'])}"
    if kind == "value_error":
        return f"argument {name} {context['error']}"
    return f"argument {name}: {error['msg']}"
