"""The ACP agent's errors, and the one place they become JSON-RPC errors.

::

    AcpAgentError                 a request the agent cannot serve
    ├── UnknownSession            no session with that id here or in the store
    └── SessionBusy               the session already runs a prompt

Lower layers' errors (the session store's, the providers') are mapped to
these where the agent meets them; :func:`to_request_error` maps these to the
SDK's :class:`acp.RequestError` at the boundary, each message saying what to
do next.
"""

from __future__ import annotations

from acp import RequestError

__all__ = ["AcpAgentError", "SessionBusy", "UnknownSession", "to_request_error"]

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002


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


def to_request_error(exc: AcpAgentError) -> RequestError:
    """The JSON-RPC error the client receives for ``exc``."""
    return RequestError(exc.code, str(exc))
