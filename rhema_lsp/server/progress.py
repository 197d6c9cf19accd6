"""One work-done progress per run, sent by hand, never waited on.

pygls' own progress helper keeps every token it ever saw; a server that runs
thousands of turns must not. This one uses the client's ``workDoneToken``
when the run may report on it, else creates a token when the client supports
``window.workDoneProgress``, and else stays silent (which token is the
negotiation's: :class:`~rhema_lsp.server.clients.ClientFeatures`).

A created token is never awaited: the run goes on at once, and ``begin``
(with the run's latest message) is sent when the client answers the
``window/workDoneProgress/create``. A client that never answers it sees no
progress, and the run runs and ends all the same (lsp-mode 8 drops it now
and then: its synchronous request throws out of its process filter on the
command's answer, losing whatever it read with it); an answer that comes
after the run ended begins nothing (the run's end withdraws a creation still
unanswered, so no request is kept waiting for good); a refusal leaves the
run silent.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from rhema_lsp.runs.registry import ProgressToken

if TYPE_CHECKING:
    from concurrent.futures import Future

    from rhema_lsp.server.pygls_adapter import LspServer

__all__ = ["RunProgress"]

logger = logging.getLogger(__name__)


class RunProgress:
    """``begin`` / ``report`` / ``end`` on one token, or nothing at all.

    Parameters
    ----------
    server
        The language server (its protocol sends the notifications).
    token
        The token the run reports on (``None``: silent).
    message
        The run's first message.
    begun
        Whether the token may be used now (the client's own token), or only
        once the client has answered its creation.
    """

    def __init__(
        self, server: LspServer, token: ProgressToken | None, message: str, *, begun: bool
    ) -> None:
        self._server = server
        self.token = token
        self._message = message
        self._begun = False
        self._ended = False
        self._creating: str | None = None
        """The id of the token's creation while the client has not answered it."""
        if begun:
            self._begin()

    @classmethod
    def start(
        cls,
        server: LspServer,
        client_token: ProgressToken | None,
        message: str,
        *,
        can_create: bool,
    ) -> RunProgress:
        """A progress on the client's token, begun now; or on a new one,
        created when the client supports ``window.workDoneProgress``
        (``can_create``) and begun once the client answers; or silent."""
        if client_token is not None or not can_create:
            return cls(server, client_token, message, begun=client_token is not None)
        token = f"rhema-{uuid.uuid4()}"
        progress = cls(server, token, message, begun=False)
        progress._creating = msg_id = str(uuid.uuid4())
        answer = server.protocol.send_request(
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
            types.WorkDoneProgressCreateParams(token=token),
            msg_id=msg_id,
        )
        answer.add_done_callback(progress._created)
        return progress

    def _created(self, answer: Future[Any]) -> None:
        """The client answered the token's creation: begin, unless the run
        ended meanwhile or the client refused."""
        self._creating = None
        if answer.cancelled():
            return
        refused = answer.exception()
        if refused is not None:
            logger.warning("the client refused a progress token: %s", refused)
            self.token = None
        elif not self._ended:
            self._begin()

    def _begin(self) -> None:
        self._begun = True
        self._notify(
            types.WorkDoneProgressBegin(title="Rhema", message=self._message, cancellable=True)
        )

    def report(self, message: str) -> None:
        """Say what the run is doing now (remembered until the progress begins)."""
        self._message = message
        if self._begun and not self._ended:
            self._notify(types.WorkDoneProgressReport(message=message))

    def end(self, message: str) -> None:
        """End the progress (once; nothing is sent if it never began, and a
        creation still unanswered is withdrawn)."""
        if self._creating is not None:
            self._server.protocol.withdraw_request(self._creating)
            self._creating = None
        if self._begun and not self._ended:
            self._notify(types.WorkDoneProgressEnd(message=message))
        self._ended = True

    def _notify(
        self,
        value: types.WorkDoneProgressBegin
        | types.WorkDoneProgressReport
        | types.WorkDoneProgressEnd,
    ) -> None:
        if self.token is not None:
            self._server.protocol.notify(
                types.PROGRESS, types.ProgressParams(token=self.token, value=value)
            )
