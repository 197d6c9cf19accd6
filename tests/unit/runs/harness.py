"""The run pipeline in process: a real store, the in-memory editor, the fake
model server over real HTTP, and an output that records what a turn shows.

:class:`Bench` holds one workspace's pieces and runs turns on them
(:meth:`Bench.turn`); :class:`Recorder` is the :class:`TurnOutput`, which can
act on an event as it passes (cancel the run mid-stream, for instance).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rhema_lsp.engine import Event, EventSink, Role, Session
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.providers import ProviderSettings, ResolvedProvider, resolve_provider
from rhema_lsp.runs.backends import Backends
from rhema_lsp.runs.door import Door
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.registry import Run
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.turn import Finish, TurnReport, Turns
from rhema_lsp.runs.workplace import Plan, Workplace
from rhema_lsp.sessions import SessionStore
from rhema_lsp.tools import MemoryEditor
from rhema_lsp.vocabulary import Mode
from tests.fakes.model_server import FakeModelServer


@dataclass
class Recorder:
    """A turn's output: every event, the outcome it closed with, and an
    optional hook seeing each event with the run."""

    events: list[Event] = field(default_factory=list)
    opened: list[TurnRef] = field(default_factory=list)
    closed: list[Outcome] = field(default_factory=list)
    hook: Callable[[Event], None] | None = None

    async def open(self, ref: TurnRef) -> EventSink:
        self.opened.append(ref)
        return self

    def emit(self, event: Event) -> None:
        self.events.append(event)
        if self.hook is not None:
            self.hook(event)

    async def close(self, outcome: Outcome) -> None:
        self.closed.append(outcome)

    def of(self, kind: type) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]


def roles(session: Session) -> list[str]:
    return [str(message.role) for message in session.history]


def no_two_user_messages_in_a_row(session: Session) -> bool:
    users = [message.role is Role.USER for message in session.history]
    return not any(a and b for a, b in itertools.pairwise(users))


def request_roles(request: dict[str, Any]) -> list[str]:
    return [m["role"] for m in request["messages"] if m["role"] != "system"]


@dataclass
class Bench:
    """One workspace's store, editor and model, and the pipeline over them."""

    folder: Path
    store: SessionStore
    editor: MemoryEditor
    fake: FakeModelServer
    turns: Turns
    settings: Settings
    backends: list[ResolvedProvider] = field(default_factory=list)
    door: Door[ProviderSettings, ResolvedProvider] = field(init=False)

    def __post_init__(self) -> None:
        self.door = Door(
            self.turns.mcp, Backends(ProviderSettings.of, resolve_provider), turns=self.turns
        )

    @property
    def place(self) -> Workplace:
        return Workplace(self.store, self.folder, [self.folder], self.editor)

    async def backend(self) -> ResolvedProvider:
        if not self.backends:
            self.backends.append(
                await resolve_provider(
                    ProviderSettings(
                        provider="custom",
                        protocol="openai",
                        base_url=self.fake.base_url,
                        model="fake-model",
                    ),
                    env={},
                    detect_local=False,
                )
            )
        return self.backends[0]

    async def begin(self, prompt: str | None, session: str | None = None, **plan: Any) -> Run:
        """Register the run of ``prompt`` on ``session`` (new if ``None``) and
        decide its turn, as every door does (the door kit)."""
        run = await self.door.start(self.store, session, self.plan(prompt, **plan))
        self.door.end(run)  # the bench runs one turn at a time, unregistered
        return run

    def plan(self, prompt: str | None, mode: Mode = "edit", **extra: Any) -> Plan:
        return Plan(prompt=prompt, title=prompt or "", mode=mode, max_steps=10, **extra)

    async def turn(
        self,
        prompt: str | None,
        session: str | None = None,
        *,
        run: Run | None = None,
        output: Recorder | None = None,
        finish: Finish[Any] | None = None,
        **plan: Any,
    ) -> tuple[TurnReport[Any], Recorder]:
        """Run one turn to its end."""
        if run is None:
            run = await self.begin(prompt, session, **plan)
        output = Recorder() if output is None else output
        report = await self.turns.run(
            run,
            self.plan(prompt, **plan),
            self.place,
            self.backend,
            self.settings,
            output,
            finish=finish,
        )
        return report, output


def make_turns(**options: Any) -> Turns:
    return Turns(McpHub(), **options)
