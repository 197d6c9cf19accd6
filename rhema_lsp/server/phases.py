"""The life of one LSP connection: what each message gets in each phase.

``new`` until ``initialize`` is received, ``initialized`` until
``shutdown`` is, then ``shut down``. :meth:`Phases.admit` is asked about
every request and notification (already a well-formed JSON-RPC message)
before it reaches pygls, and returns the refusal that answers it, if any;
:meth:`Phases.serving` is told of each one that goes on to be served:

- ``exit`` is always admitted; it ends the process with 0 after
  ``shutdown`` and 1 before (LSP).
- Before ``initialize``: a request is -32002 (ServerNotInitialized), a
  notification is dropped; nothing reaches a handler, so nothing is set up
  before the client's capabilities are known.
- A second ``initialize`` is -32600: the first one's workspace stays.
- After ``shutdown``: a request is -32600, a notification is dropped.
- A method nobody serves: -32601 for a request; a notification is dropped
  (``$/`` ones silently, as LSP asks).
- A request sent without an id, or a notification with one: -32600 (a
  notification is never answered, so a client waiting for it would wait
  forever), or dropped when there is no id to answer.

No pygls here: :mod:`.app` asks, and says what it serves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rhema_lsp.jsonrpc import INVALID_REQUEST, METHOD_NOT_FOUND, MessageId, Refused

__all__ = ["SERVER_NOT_INITIALIZED", "Phase", "Phases"]

SERVER_NOT_INITIALIZED = -32002

Phase = Literal["new", "initialized", "shut down"]

INITIALIZE = "initialize"
SHUTDOWN = "shutdown"
EXIT = "exit"


@dataclass
class Phases:
    """The phase of one connection (see the module docstring)."""

    phase: Phase = "new"

    def admit(
        self, method: str, msg_id: MessageId, *, request: bool, served: bool, kind: bool | None
    ) -> Refused | None:
        """The refusal for this message now, or ``None`` to serve it.

        Parameters
        ----------
        method, msg_id
            The message's method and id (``None`` for a notification).
        request
            Whether it came with an id.
        served
            Whether the server has a handler for ``method``.
        kind
            Whether LSP defines ``method`` as a request (``True``) or a
            notification (``False``); ``None`` for a method LSP does not define.
        """
        return self._refusal(method, msg_id, request=request, served=served, kind=kind)

    def serving(self, method: str) -> None:
        """An admitted message goes to its handler: ``initialize`` and
        ``shutdown`` move to the next phase."""
        if method == INITIALIZE:
            self.phase = "initialized"
        elif method == SHUTDOWN:
            self.phase = "shut down"

    def exit_code(self) -> int:
        """The process's exit code if the connection ended now."""
        return 0 if self.phase == "shut down" else 1

    def _refusal(
        self, method: str, msg_id: MessageId, *, request: bool, served: bool, kind: bool | None
    ) -> Refused | None:
        if kind is not None and kind != request:
            if kind:
                return Refused(
                    INVALID_REQUEST, f"{method} is a request: it needs an id", answer=False
                )
            return Refused(
                INVALID_REQUEST,
                f"Invalid request: {method} is a notification: it takes no id",
                msg_id,
            )
        if method == EXIT:
            return None
        if self.phase == "new" and method != INITIALIZE:
            return Refused(
                SERVER_NOT_INITIALIZED,
                f"the server is not initialized: send initialize before {method}",
                msg_id,
                answer=request,
            )
        if self.phase == "shut down":
            return Refused(
                INVALID_REQUEST,
                f"Invalid request: the server is shut down, {method} after shutdown "
                "(only exit is served)",
                msg_id,
                answer=request,
            )
        if method == INITIALIZE and self.phase == "initialized":
            return Refused(
                INVALID_REQUEST,
                "Invalid request: the server is already initialized (initialize is sent once)",
                msg_id,
            )
        if not served:
            return Refused(METHOD_NOT_FOUND, f"Method not found: {method}", msg_id, answer=request)
        return None
