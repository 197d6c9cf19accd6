"""Running turns and steps, and the three ways to stop one.

Each run owns an anyio cancel scope and the tools' cancel signal. A run is
registered under its session, under the JSON-RPC id of the request that
started it, and under its progress token, so ``$/cancelRequest``,
``window/workDoneProgress/cancel`` and ``rhema.cancel`` all reach the same
:meth:`Run.cancel`. A session runs one turn at a time in this process; the
session store's lease extends that across processes. At shutdown
:meth:`RunRegistry.stop_all` cancels every run and gives them
:data:`SHUTDOWN_WAIT` seconds to checkpoint their sessions, whichever door
(and whichever signal: the client's goodbye, stdin closing, ``SIGTERM``)
ends the process.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import anyio

from rhema_lsp.engine import CancelSignal
from rhema_lsp.runs.refs import TurnRef

__all__ = ["SHUTDOWN_WAIT", "MsgId", "ProgressToken", "Run", "RunRegistry", "SessionRunningError"]

ProgressToken = int | str
"""An LSP work-done progress token."""

MsgId = int | str
"""A JSON-RPC request id."""

SHUTDOWN_WAIT = 5.0
"""Seconds shutdown gives cancelled runs to checkpoint their sessions."""


class SessionRunningError(Exception):
    """The session already has a run in this server."""

    def __init__(self, session: str) -> None:
        super().__init__(
            f"session {session} is already running a turn; wait for it to finish or "
            "cancel it (rhema.cancel) first"
        )
        self.session = session


@dataclass(eq=False)
class Run:
    """One running turn or step."""

    session: str
    turn: int
    msg_id: MsgId | None = None
    token: ProgressToken | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    signal: CancelSignal = field(default_factory=CancelSignal)
    finished: anyio.Event = field(default_factory=anyio.Event)

    @property
    def ref(self) -> TurnRef:
        """The turn this run runs."""
        return TurnRef(self.session, self.turn)

    @property
    def cancelled(self) -> bool:
        """Whether anyone asked this run to stop."""
        return self.signal.is_set()

    def cancel(self) -> None:
        """Stop the run: no further tool starts, the stream in flight closes."""
        self.signal.set()
        self.scope.cancel()


class RunRegistry:
    """The runs of this server, by session, request id and progress token."""

    def __init__(self) -> None:
        self._by_session: dict[str, Run] = {}
        self._by_msg: dict[MsgId, Run] = {}
        self._by_token: dict[ProgressToken, Run] = {}
        self._idle: anyio.Event | None = None

    def __len__(self) -> int:
        return len(self._by_session)

    def __iter__(self) -> Iterator[Run]:
        return iter(list(self._by_session.values()))

    def sessions(self) -> list[str]:
        """The sessions with a run in this server."""
        return list(self._by_session)

    def is_running(self, session: str) -> bool:
        return session in self._by_session

    def add(self, run: Run) -> None:
        """Register ``run``; raises :class:`SessionRunningError` if its session is busy."""
        if run.session in self._by_session:
            raise SessionRunningError(run.session)
        self._by_session[run.session] = run
        if run.msg_id is not None:
            self._by_msg[run.msg_id] = run

    def set_token(self, run: Run, token: ProgressToken) -> None:
        run.token = token
        self._by_token[token] = run

    def remove(self, run: Run) -> None:
        run.finished.set()
        if self._by_session.get(run.session) is run:
            del self._by_session[run.session]
        if run.msg_id is not None and self._by_msg.get(run.msg_id) is run:
            del self._by_msg[run.msg_id]
        if run.token is not None and self._by_token.get(run.token) is run:
            del self._by_token[run.token]
        if not self._by_session and self._idle is not None:
            self._idle.set()
            self._idle = None

    async def wait_idle(self) -> None:
        """Return once no run is left."""
        if self._by_session:
            if self._idle is None:
                self._idle = anyio.Event()
            await self._idle.wait()

    async def wait_finished(self, session: str) -> None:
        """Return once ``session`` has no run in this server."""
        while (run := self._by_session.get(session)) is not None:
            await run.finished.wait()

    def by_msg(self, msg_id: MsgId) -> Run | None:
        return self._by_msg.get(msg_id)

    def by_token(self, token: ProgressToken) -> Run | None:
        return self._by_token.get(token)

    def cancel(self, session: str | None = None) -> list[str]:
        """Cancel the run of ``session``, or every run; the sessions cancelled."""
        runs = list(self._by_session.values())
        if session is not None:
            runs = [run for run in runs if run.session == session]
        for run in runs:
            run.cancel()
        return [run.session for run in runs]

    async def stop_all(self, wait: float = SHUTDOWN_WAIT) -> None:
        """Cancel every run and return once they have all ended (each
        checkpoints its session on the way out), or after ``wait`` seconds."""
        self.cancel()
        with anyio.move_on_after(wait):
            await self.wait_idle()
