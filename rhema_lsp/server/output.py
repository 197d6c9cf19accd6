"""What the editor sees of a run: the LSP door's
:class:`~rhema_lsp.runs.workplace.TurnOutput`.

:class:`LspOutput` opens, once the pipeline holds the session's lease, the
run's work-done progress (the client's token, or one created), its event
stream (:class:`~rhema_lsp.server.stream.RunStream`, the session's sequence
numbers, the progress message following the activity) and, for a client
that does not render events, the session's transcript with its closing
message (:class:`~rhema_lsp.server.plain_output.PlainOutput`).
:func:`event_stream` is the one place ``rhema/event`` is sent: only to a
client that declared ``events`` (for others the stream still drives the
progress message and the transcript).
It closes them in that order's reverse once the turn has ended.
:func:`event_stream` is a bare stream for work outside a turn (resuming a
session, compacting one).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rhema_lsp.contract import EVENT_METHOD
from rhema_lsp.engine import EventSink
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.registry import ProgressToken, Run
from rhema_lsp.server.folders import FolderState
from rhema_lsp.server.plain_output import PlainOutput
from rhema_lsp.server.progress import RunProgress
from rhema_lsp.server.stream import RunStream

if TYPE_CHECKING:
    from collections.abc import Callable

    from rhema_lsp.server.state import ServerState

__all__ = ["LspOutput", "event_stream", "transcript_path"]


def transcript_path(state: FolderState, session: str) -> Path:
    """Where the transcript of ``session`` is written."""
    return state.store.path.parent / "transcripts" / f"{session}.md"


def event_stream(
    server: ServerState, ref: TurnRef, report: Callable[[str], None] | None = None
) -> RunStream:
    """``ref``'s events as ``rhema/event`` notifications, if the client
    renders them."""

    def send(params: dict[str, Any]) -> None:
        if server.client.events:
            server.server.protocol.notify(EVENT_METHOD, params)

    return RunStream(
        send,
        session=ref.session,
        turn=ref.turn,
        next_seq=lambda: server.next_seq(ref.session),
        report=report,
    )


class LspOutput:
    """One run's progress, events and, for a plain client, transcript.

    Parameters
    ----------
    server
        The server's state (its client, runs and tasks).
    folder
        The run's folder (its transcripts live beside its store).
    run
        The run (its progress token is registered, for cancellation).
    title
        What the user asked (empty when the run continues a turn).
    token
        The client's work-done token, if the request carried one.
    tasks
        Where a task showing the transcript is kept (cancelled at shutdown).
    """

    def __init__(
        self,
        server: ServerState,
        folder: FolderState,
        run: Run,
        title: str,
        token: ProgressToken | None,
        tasks: set[asyncio.Task[Any]],
    ) -> None:
        self._server = server
        self._folder = folder
        self._run = run
        self._title = title
        self._token = token
        self._tasks = tasks
        self._progress: RunProgress | None = None
        self._stream: RunStream | None = None
        self._plain: PlainOutput | None = None

    async def open(self, ref: TurnRef) -> EventSink:
        """Begin the progress, the stream and (plain clients) the transcript."""
        server = self._server
        progress = self._progress = RunProgress.start(
            server.server, self._token, "starting", can_create=server.client.work_done_progress
        )
        if progress.token is not None:
            server.runs.set_token(self._run, progress.token)
        stream = self._stream = event_stream(server, ref, progress.report)
        if server.client.events:
            return stream
        path = transcript_path(self._folder, ref.session)
        show = self._tasks if server.client.show_document else None
        plain = self._plain = PlainOutput(
            server.server,
            path,
            ref.turn,
            self._title or None,
            show,
            lists_plan=server.client.lists_plan,
        )
        return await plain.open(stream)

    async def close(self, outcome: Outcome) -> None:
        """Flush the stream, end the progress, finish the transcript."""
        if self._stream is not None:
            self._stream.close()
        if self._progress is not None:
            self._progress.end(outcome.error or outcome.stop_reason.replace("_", " "))
        if self._plain is not None:
            await self._plain.close(outcome)
