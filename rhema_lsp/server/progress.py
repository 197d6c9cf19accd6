"""One work-done progress per run, sent by hand.

pygls' own progress helper keeps every token it ever saw; a server that runs
thousands of turns must not. This one uses the client's ``workDoneToken``
when the run may report on it, else creates a token when the client supports
``window.workDoneProgress``, and else stays silent (which token is the
negotiation's: :class:`~rhema_lsp.server.clients.ClientFeatures`).
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from rhema_lsp.runs.registry import ProgressToken

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = ["RunProgress"]

logger = logging.getLogger(__name__)


class RunProgress:
    """``begin`` / ``report`` / ``end`` on one token, or nothing at all."""

    def __init__(self, server: LanguageServer, token: ProgressToken | None) -> None:
        self._server = server
        self.token = token
        self._ended = False

    @classmethod
    async def start(
        cls,
        server: LanguageServer,
        client_token: ProgressToken | None,
        message: str,
        *,
        can_create: bool,
    ) -> RunProgress:
        """Begin a progress on the client's token, or on a new one when the
        client supports ``window.workDoneProgress`` (``can_create``)."""
        token = client_token
        if token is None and can_create:
            token = f"rhema-{uuid.uuid4()}"
            try:
                await server.window_work_done_progress_create_async(
                    types.WorkDoneProgressCreateParams(token=token)
                )
            except JsonRpcException as exc:
                logger.warning("the client refused a progress token: %s", exc)
                token = None
        progress = cls(server, token)
        progress._notify(
            types.WorkDoneProgressBegin(title="Rhema", message=message, cancellable=True)
        )
        return progress

    def report(self, message: str) -> None:
        """Say what the run is doing now."""
        if not self._ended:
            self._notify(types.WorkDoneProgressReport(message=message))

    def end(self, message: str) -> None:
        """End the progress (once)."""
        if not self._ended:
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
