"""The contract's commands, routed: one handler each, registered by
:func:`serves`, and the one place arguments are parsed.

A handler (in :mod:`rhema_lsp.server.handlers`, grouped by what it serves)
is an ``async`` function of the :class:`Service` (what it sees of the
:class:`~rhema_lsp.server.service.AgentService`: the state and the
execution, so a test may hand it its own), the command's typed arguments
and the :class:`~rhema_lsp.server.requests.Request` they arrived in; it
returns the command's typed result. :func:`dispatch` parses the argument
object with the command's spec, calls the handler, dumps the result, and
maps the lower layers' errors to the server's (:mod:`rhema_lsp.server.errors`),
for every command at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import anyio.to_thread
from pydantic import ValidationError

from rhema_lsp.contract import COMMANDS, CommandSpec, command_named
from rhema_lsp.runs.hook_events import PromptBlocked
from rhema_lsp.runs.registry import SessionRunningError
from rhema_lsp.server import handlers
from rhema_lsp.server.errors import BadArguments, CommandFailed
from rhema_lsp.server.folders import FolderError
from rhema_lsp.server.requests import Request
from rhema_lsp.sessions import SessionStoreError

if TYPE_CHECKING:
    from rhema_lsp.runs.settings import Settings
    from rhema_lsp.server.execution import Execution
    from rhema_lsp.server.state import ServerState

__all__ = ["Handler", "Request", "Service", "check_handlers", "dispatch", "served", "serves"]


class Service(Protocol):
    """What a handler works with: the server's state and the execution of
    its runs (:class:`~rhema_lsp.server.service.AgentService` is one)."""

    @property
    def state(self) -> ServerState: ...

    @property
    def execution(self) -> Execution: ...

    @property
    def settings(self) -> Settings: ...


Handler = Callable[[Service, Any, Request], Awaitable[Any]]
"""Serves one command: the service, the parsed arguments, the request."""


_HANDLERS: dict[str, Handler] = {}


def serves(spec: CommandSpec[Any]) -> Callable[[Handler], Handler]:
    """Mark ``handler`` as the one that serves ``spec``."""

    def register(handler: Handler) -> Handler:
        if spec.name in _HANDLERS:
            raise RuntimeError(f"{spec.name} has two handlers")
        _HANDLERS[spec.name] = handler
        return handler

    return register


def served() -> list[str]:
    """The commands that have a handler."""
    return list(_HANDLERS)


def check_handlers() -> None:
    """Raise unless every command of the contract has its handler module
    (each loads with its first command: :mod:`rhema_lsp.server.handlers`)."""
    missing = [spec.name for spec in COMMANDS if spec.name not in handlers.MODULES]
    if missing:
        raise RuntimeError(f"no handler for {', '.join(missing)}")


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "argument"
        if item["type"] == "string_pattern_mismatch":
            problems.append(f"`{where}` must not be blank")
        else:
            problems.append(f"`{where}` {item['msg'].lower()}")
    return "; ".join(problems)


def _argument_object(name: str, arguments: list[Any] | None) -> Any:
    if not arguments:
        return {}
    if len(arguments) > 1:
        raise BadArguments(f"{name}: expected one argument object, got {len(arguments)}")
    raw = arguments[0]
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise BadArguments(f"{name}: the argument must be an object with camelCase keys")
    return raw


async def dispatch(
    service: Service, name: str, arguments: list[Any] | None, request: Request
) -> Any:
    """Run one contract command with its raw arguments; the result as JSON.

    Raises
    ------
    BadArguments
        No such command, or the arguments do not validate or name nothing
        usable.
    CommandFailed
        The command cannot be served now (unknown or busy session, ...).
    """
    spec = command_named(name)
    if spec is None:
        raise BadArguments(f"unknown command {name!r}")
    try:
        args = spec.parse(_argument_object(name, arguments))
    except ValidationError as exc:
        raise BadArguments(f"{name}: {_describe(exc)}") from exc
    try:
        handler = _HANDLERS.get(name)
        if handler is None:  # its module loads with its first command, off the loop
            await anyio.to_thread.run_sync(handlers.load, name)
            handler = _HANDLERS[name]
        result = await handler(service, args, request)
    except FolderError as exc:
        raise BadArguments(str(exc)) from exc
    except (SessionRunningError, SessionStoreError, PromptBlocked) as exc:
        raise CommandFailed(str(exc)) from exc
    return spec.dump(result)
