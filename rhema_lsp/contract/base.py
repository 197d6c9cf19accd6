"""The base of every wire model: camelCase on the wire, snake_case in Python.

Arguments (what a client sends) forbid unknown fields, so a typo is an error
that names the field; results and events (what the server sends) are built
by the server and dumped by alias, ``None`` fields included where the
contract spells them as ``null``.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["Args", "Wire", "json_field_names"]


class Wire(BaseModel):
    """A model of the editor contract, camelCase on the wire."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="forbid",
    )

    def wire(self) -> dict[str, Any]:
        """The JSON object the contract sends."""
        return self.model_dump(mode="json", by_alias=True)


class Args(Wire):
    """A command's argument object, as a client sends it."""


def json_field_names(kind: Any) -> set[str]:
    """Every field name, as the wire spells it, of ``kind`` and the models
    nested in it (a model, a list of models, an optional model, ...)."""
    names: set[str] = set()
    seen: set[type] = set()

    def walk(current: Any) -> None:
        if isinstance(current, type) and issubclass(current, BaseModel):
            if current in seen:
                return
            seen.add(current)
            for name, field in current.model_fields.items():
                names.add(field.alias or name)
                walk(field.annotation)
            return
        for inner in typing.get_args(current):
            walk(inner)

    walk(kind)
    return names
