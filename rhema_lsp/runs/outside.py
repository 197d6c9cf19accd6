"""Sessions outside a turn: reopened, and compacted on demand.

Both use the pipeline's resume and budget (:class:`~rhema_lsp.runs.turn.Turns`):
:func:`reopen` completes a round a crash left open (the store's one resume
entry point) before a session is shown; :func:`compact` is a run of its
own, under the session's lease and cancellable, and its record is committed
before its ``compaction`` event is sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from rhema_lsp.engine import Compaction, EventSink, ResumeReport, Session, ToolContext
from rhema_lsp.runs.project_rules import rules_prompt
from rhema_lsp.runs.prompts import system_prompt
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.registry import Run
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.turn import Turns
from rhema_lsp.runs.workplace import BackendSource, Workplace
from rhema_lsp.tools import Planning
from rhema_lsp.vocabulary import Mode

__all__ = ["Compacted", "compact", "reopen"]


@dataclass
class Compacted:
    """What :func:`compact` did: the record it appended (``None``: nothing
    older than the latest round) and the estimated tokens of the session's
    next request before."""

    session: str
    record: Compaction | None = None
    before: int = 0


async def reopen(
    place: Workplace, ref: TurnRef, mode: Mode, settings: Settings, sink: EventSink
) -> tuple[Session, ResumeReport]:
    """``ref``'s session as stored, a round a crash left open completed
    first with ``mode``'s tools (its events to ``sink``).

    Raises
    ------
    SessionStoreError
        The session is unknown or unreadable, or the completion could not
        be committed.
    """
    ctx = ToolContext(cwd=place.folder, run_id=ref.run_id)
    tools = Planning(place.tools(mode, settings), sink.emit)
    return await place.store.open_and_resume(ref.session, tools, sink, ctx)


async def compact(
    turns: Turns,
    run: Run,
    place: Workplace,
    backend_source: BackendSource,
    settings: Settings,
    sink: EventSink,
) -> Compacted:
    """Compact ``run``'s session now, under its lease and cancellable as
    ``run``, and commit the record.

    Raises
    ------
    SessionStoreError
        The session is unknown or busy in another window.
    ProviderError
        No provider can be resolved.
    """
    ref = run.ref
    done = Compacted(ref.session)
    backend = await backend_source()
    mode = settings.mode
    async with place.store.lease(ref.session):
        with run.scope:
            tools = place.tools(mode, settings, turns.on_point)
            ctx = ToolContext(cwd=place.folder, run_id=ref.run_id, cancel=run.signal)
            resolver = Planning(tools, sink.emit)
            session, _ = await place.store.open_and_resume(ref.session, resolver, sink, ctx)
            rules = await turns.rules(place, tools)
            system = system_prompt(mode, place.folder) + rules_prompt(rules.root)
            agent = turns.agent(backend, settings, ref, resolver, system, place.store)
            done.before = agent.compactor().estimate(session)
            # Committed (by the agent's compaction hook) before its event is sent.
            done.record = await agent.compact(session, sink)
    return done
