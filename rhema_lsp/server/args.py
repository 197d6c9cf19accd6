"""The command arguments of the editor contract, validated.

Each command takes one argument object with camelCase keys. A missing,
mistyped or unknown field is an :class:`InvalidArguments` error that names
the field, which the server sends back as JSON-RPC ``InvalidParams``.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "CancelArgs",
    "ContextRef",
    "EditArgs",
    "InvalidArguments",
    "OpenSessionArgs",
    "PositionArg",
    "RangeArg",
    "SessionArgs",
    "SessionsArgs",
    "StatusArgs",
    "StepArgs",
    "TurnArgs",
    "UndoTurnArgs",
    "parse_args",
]

Model = TypeVar("Model", bound=BaseModel)
ModeArg = Literal["ask", "edit", "agent"]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class PositionArg(_Args):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class RangeArg(_Args):
    start: PositionArg
    end: PositionArg


class ContextRef(_Args):
    uri: str = Field(min_length=1)
    range: RangeArg | None = None


class TurnArgs(_Args):
    prompt: str = Field(min_length=1)
    folder: str | None = None
    session: str | None = None
    context: list[ContextRef] = Field(default_factory=list)
    mode: ModeArg | None = None
    max_steps: int | None = Field(default=None, alias="maxSteps", ge=1, le=500)


class StepArgs(_Args):
    session: str | None = None
    prompt: str | None = None
    folder: str | None = None
    context: list[ContextRef] = Field(default_factory=list)
    mode: ModeArg | None = None


class CancelArgs(_Args):
    session: str | None = None


class SessionsArgs(_Args):
    folder: str | None = None


class SessionArgs(_Args):
    session: str = Field(min_length=1)


OpenSessionArgs = SessionArgs


class EditArgs(_Args):
    uri: str = Field(min_length=1)
    range: RangeArg
    instruction: str = Field(min_length=1)
    session: str | None = None


class UndoTurnArgs(_Args):
    session: str = Field(min_length=1)
    turn: int | None = Field(default=None, ge=1)


class StatusArgs(_Args):
    pass


class InvalidArguments(ValueError):
    """A command's argument object does not validate; names the field."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(f"{command}: {message}")
        self.command = command


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "argument"
        problems.append(f"`{where}` {item['msg'].lower()}")
    return "; ".join(problems)


def parse_args(command: str, model: type[Model], arguments: list[Any] | None) -> Model:
    """Validate the single argument object of ``command``.

    Raises
    ------
    InvalidArguments
        The arguments are not one object, or a field is missing, of the
        wrong type, or unknown.
    """
    if not arguments:
        raw: Any = {}
    elif len(arguments) == 1:
        raw = arguments[0]
    else:
        raise InvalidArguments(command, f"expected one argument object, got {len(arguments)}")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InvalidArguments(command, "the argument must be an object with camelCase keys")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise InvalidArguments(command, _describe(exc)) from exc
