"""What a client that does not render ``rhema/event`` sees of a run.

Such a client (eglot, lsp-mode, Vim, Helix, any editor without a rhema
plugin) gets the session's transcript file
(:class:`~rhema_lsp.server.transcript.Transcript`) and, when the turn ends:

- ``window/showDocument`` of the transcript (without taking focus), where
  the client supports it, sent only after the final write, so the file it
  opens holds the answer (lsp-mode ignores ``takeFocus: false`` and never
  reverts the window: opened early, it would show the prompt alone);
- a closing ``window/showMessage``: one short paragraph that reads well on
  one line (Vim clients cut multi-line messages and show newlines as
  ``^@``): the answer's gist, the stop reason, the transcript's path last.
  For a client that shows neither the transcript nor progress (eglot 1.9),
  whose only view of the turn is this message, it also lists each step of
  the turn's plan, if it made one, with its status.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from rhema_lsp.engine import Event, PlanEntry
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.server.stream import RunStream
from rhema_lsp.server.transcript import Transcript

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pygls.lsp.server import LanguageServer

__all__ = ["GIST_CHARS", "PlainOutput", "Tee", "closing_message"]

logger = logging.getLogger(__name__)

GIST_CHARS = 160
"""How much of the answer the closing message quotes."""


def closing_message(head: str, reason: str, path: Path, plan: Sequence[PlanEntry] = ()) -> str:
    """The closing ``showMessage``: ``head`` as one paragraph (whitespace
    runs made single spaces, cut to :data:`GIST_CHARS`), the stop reason,
    each step of ``plan`` with its status, the transcript's path last."""
    gist = " ".join(head.split()) or "(no answer text)"
    if len(gist) > GIST_CHARS:
        gist = gist[: GIST_CHARS - 1].rstrip() + "…"
    steps = "; ".join(
        f"{number}. {' '.join(entry.content.split())} ({entry.status.replace('_', ' ')})"
        for number, entry in enumerate(plan, 1)
    )
    listed = f" Plan: {steps}." if steps else ""
    return f"Rhema: {gist} ({reason}).{listed} Transcript: {path}"


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
    show
        Where to keep the task awaiting ``showDocument``'s answer (cancelled
        at shutdown), when the client supports it; ``None``: not shown.
    lists_plan
        Whether the closing message lists the plan's steps.
    """

    def __init__(
        self,
        server: LanguageServer,
        path: Path,
        turn: int,
        prompt: str | None,
        show: set[asyncio.Task[Any]] | None,
        *,
        lists_plan: bool = False,
    ) -> None:
        self._server = server
        self._show = show
        self._lists_plan = lists_plan
        self.transcript = Transcript(path, turn, prompt)

    async def open(self, stream: RunStream) -> Tee:
        """Load the transcript so far; the sink that feeds both."""
        await self.transcript.open()
        return Tee(stream, self.transcript)

    def _show_transcript(self, tasks: set[asyncio.Task[Any]]) -> None:
        """Send ``showDocument`` of the transcript now; its answer is awaited
        in a task added to ``tasks``."""
        params = types.ShowDocumentParams(uri=self.transcript.path.as_uri(), take_focus=False)
        answer = self._server.protocol.send_request_async(types.WINDOW_SHOW_DOCUMENT, params)

        async def answered() -> None:
            try:
                await answer
            except JsonRpcException as exc:
                logger.info("the client did not show the transcript: %s", exc)

        task = asyncio.get_running_loop().create_task(answered())
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def close(self, outcome: Outcome) -> None:
        """Write the transcript's last state, show it, say how the run ended."""
        with anyio.CancelScope(shield=True):
            await self.transcript.flush()
        if self._show is not None:
            self._show_transcript(self._show)
        if outcome.error is not None:
            kind, head = types.MessageType.Error, outcome.error
        else:
            kind, head = types.MessageType.Info, "".join(self.transcript.answer)
        reason = outcome.stop_reason.replace("_", " ")
        plan = self.transcript.plan if self._lists_plan else ()
        message = closing_message(head, reason, self.transcript.path, plan)
        self._server.window_show_message(types.ShowMessageParams(type=kind, message=message))
