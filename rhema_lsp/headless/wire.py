"""The contract as the headless client reads it: every ``rhema/event`` and
every command result parsed by the contract's own models.

Nothing here spells a wire key: the models of :mod:`rhema_lsp.contract` do,
and they forbid fields they do not know. So when the server and this client
disagree about the contract (a key renamed, a field added or gone, a new
event type), reading fails with a :class:`ContractDrift` that names what
differed, instead of a ``KeyError`` or a silently missing line.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from rhema_lsp.contract import EVENT_METHOD, Args, RhemaEventParams
from rhema_lsp.headless.errors import HeadlessError

__all__ = ["ContractDrift", "read_event", "read_result", "write_args"]

R = TypeVar("R")

_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


class ContractDrift(HeadlessError):
    """The server sent what this client's contract does not describe."""


def _drift(what: str, exc: ValidationError) -> ContractDrift:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(the whole object)"
    return ContractDrift(
        f"{what} does not match this client's contract ({exc.error_count()} difference(s); "
        f"first: {where}: {first['msg']}); the server and `rhema-lsp ask` must be the same version"
    )


def read_event(raw: Any) -> RhemaEventParams:
    """One ``rhema/event`` notification's params.

    Raises
    ------
    ContractDrift
        When they are not an event of the contract.
    """
    try:
        return RhemaEventParams.model_validate(raw)
    except ValidationError as exc:
        raise _drift(f"a {EVENT_METHOD} notification", exc) from exc


def read_result(kind: type[R], raw: Any, command: str) -> R:
    """The result of ``command`` as the contract's ``kind`` (a model, or a list of them).

    Raises
    ------
    ContractDrift
        When ``raw`` is not one.
    """
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        adapter = _ADAPTERS[kind] = TypeAdapter(kind)
    try:
        result: R = adapter.validate_python(raw)
    except ValidationError as exc:
        raise _drift(f"the server's answer to {command}", exc) from exc
    return result


def write_args(args: Args) -> dict[str, Any]:
    """A command's argument object as the contract sends it (unset options left out)."""
    return args.model_dump(mode="json", by_alias=True, exclude_none=True)
