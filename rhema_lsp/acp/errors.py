"""The ACP agent's errors, and the one boundary where every error becomes
a JSON-RPC error.

::

    AcpAgentError                 a request the agent cannot serve
    ├── UnknownSession            no session with that id here or in the store  -32002
    ├── SessionBusy               the session already runs a prompt             -32602
    ├── BadParams                 a parameter names nothing usable              -32602
    └── TurnFailed                the turn ran and failed                       -32603

The rule (as the language server's router, :func:`rhema_lsp.server.router.dispatch`,
maps its commands' errors once): code below the boundary raises its own
layer's root exception (these, the session store's
:class:`~rhema_lsp.sessions.SessionStoreError`, the run registry's
:class:`~rhema_lsp.runs.registry.SessionRunningError`, the providers'
:class:`~rhema_lsp.engine.ProviderError`, a refused image's
:class:`~rhema_lsp.engine.ImageRefused`) and never builds an SDK
:class:`acp.RequestError`; every method the SDK calls is wrapped in
:func:`answers`, which maps them with :func:`to_request_error`, each
message saying what to do next. A ``RequestError`` from the client (a
request of ours it refused) passes through as it is.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from acp import RequestError

from rhema_lsp.engine import ImageRefused, ProviderError
from rhema_lsp.runs.hook_events import PromptBlocked
from rhema_lsp.runs.registry import SessionRunningError
from rhema_lsp.sessions import SessionBusyError, SessionStoreError, UnknownSessionError

__all__ = [
    "AcpAgentError",
    "BadParams",
    "SessionBusy",
    "TurnFailed",
    "UnknownSession",
    "answers",
    "to_request_error",
]

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002

P = ParamSpec("P")
R = TypeVar("R")


class AcpAgentError(Exception):
    """A request the agent cannot serve; the message says what to do."""

    code = INTERNAL_ERROR


class UnknownSession(AcpAgentError):
    """No session with that id is known here or in the folder's store."""

    code = RESOURCE_NOT_FOUND

    def __init__(self, session: str, where: str) -> None:
        super().__init__(
            f"no session {session} in {where}; start a new one (session/new), "
            "or pass the folder it was started in as cwd"
        )


class SessionBusy(AcpAgentError):
    """The session already runs a prompt (here, or in another window)."""

    code = INVALID_PARAMS


class BadParams(AcpAgentError):
    """A parameter names nothing usable (a ``cwd``, a mode, a cursor, an empty prompt)."""

    code = INVALID_PARAMS


class TurnFailed(AcpAgentError):
    """The turn ran and failed; the message says why."""

    code = INTERNAL_ERROR


def to_request_error(exc: Exception) -> RequestError:
    """The JSON-RPC error the client receives for ``exc`` (the one mapping)."""
    if isinstance(exc, RequestError):
        return exc
    if isinstance(exc, AcpAgentError):
        return RequestError(exc.code, str(exc))
    if isinstance(exc, (SessionRunningError, SessionBusyError)):
        return RequestError(SessionBusy.code, str(exc))
    if isinstance(exc, UnknownSessionError):
        return RequestError(RESOURCE_NOT_FOUND, str(exc))
    if isinstance(exc, ImageRefused):
        return RequestError(INVALID_PARAMS, f"an image of the prompt is refused: {exc}")
    if isinstance(exc, PromptBlocked):
        return RequestError(INVALID_PARAMS, str(exc))
    return RequestError(INTERNAL_ERROR, str(exc))


_MAPPED = (
    AcpAgentError,
    SessionRunningError,
    SessionStoreError,
    ProviderError,
    ImageRefused,
    PromptBlocked,
)
"""The root exceptions :func:`answers` maps; anything else is a bug, and
the SDK answers it as an internal error with its traceback logged."""


def answers(method: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """``method`` (one the SDK calls) with its errors mapped at the boundary."""

    @functools.wraps(method)
    async def answered(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except _MAPPED as exc:
            raise to_request_error(exc) from exc

    return answered
