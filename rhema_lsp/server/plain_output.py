"""What a client that does not render ``rhema/event`` sees of a run.

Such a client (plain eglot, any editor without a rhema plugin) gets the
session's transcript file (:class:`~rhema_lsp.server.transcript.Transcript`),
opened once per turn with ``window/showDocument`` (without taking focus)
where the client supports it, and a closing ``window/showMessage`` with the
answer's first lines, the stop reason and where the transcript is.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from rhema_lsp.engine import Event
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.server.stream import RunStream
from rhema_lsp.server.transcript import Transcript, first_lines

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = ["PlainOutput", "Tee"]

logger = logging.getLogger(__name__)


class Tee:
    """Sends each event to the editor's stream and to the transcript."""

    __slots__ = ("stream", "transcript")

    def __init__(self, stream: RunStream, transcript: Transcript) -> None:
        self.stream = stream
        self.transcript = transcript

    def emit(self, event: Event) -> None:
        self.stream.emit(event)
        self.transcript.emit(event)


class PlainOutput:
    """One run's output for a client that does not render events.

    Parameters
    ----------
    server
        The language server (for ``showDocument`` and ``showMessage``).
    path
        The session's transcript file.
    turn
        The run's turn.
    prompt
        What the user asked (``None`` when the run continues a turn).
    """

    def __init__(self, server: LanguageServer, path: Path, turn: int, prompt: str | None) -> None:
        self._server = server
        self.transcript = Transcript(path, turn, prompt)

    async def open(self, stream: RunStream) -> Tee:
        """Load the transcript so far; the sink that feeds both."""
        await self.transcript.open()
        return Tee(stream, self.transcript)

    def show(self, tasks: set[asyncio.Task[Any]]) -> None:
        """Open the transcript in the editor, in a task added to ``tasks``
        (which the caller cancels at shutdown)."""

        async def show() -> None:
            await self.transcript.flush()  # the file exists before the editor opens it
            try:
                await self._server.window_show_document_async(
                    types.ShowDocumentParams(uri=self.transcript.path.as_uri(), take_focus=False)
                )
            except JsonRpcException as exc:
                logger.info("the client did not show the transcript: %s", exc)

        task = asyncio.get_running_loop().create_task(show())
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def close(self, outcome: Outcome) -> None:
        """Write the transcript's last state, then say how the run ended."""
        with anyio.CancelScope(shield=True):
            await self.transcript.flush()
        if outcome.error is not None:
            kind, head = types.MessageType.Error, outcome.error
        else:
            kind = types.MessageType.Info
            head = first_lines("".join(self.transcript.answer)) or "(no answer text)"
        reason = outcome.stop_reason.replace("_", " ")
        path = self.transcript.path
        self._server.window_show_message(
            types.ShowMessageParams(
                type=kind, message=f"Rhema: {head}\n— {reason}. Transcript: {path}"
            )
        )
