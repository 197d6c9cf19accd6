"""The run pipeline: everything between "a prompt arrived" and "the turn is
recorded", written once for every front door.

:class:`Turns` is one per door for the life of the process and owns what
outlives a run: each session's :class:`~rhema_lsp.engine.ContextBudget`
(the window, and the token estimate every call calibrates), the nested
project rules its turns gave, and the MCP hub the runs take tools from. The
door kit (:class:`~rhema_lsp.runs.door.Door`) registers the run and decides
its turn (the number reserved durably, a new session created with its
first prompt); then :meth:`Turns.run`:

1. takes the session's lease (another live holder: :class:`SessionBusyError`,
   nothing done);
2. opens the door's :class:`~rhema_lsp.runs.workplace.TurnOutput`;
3. resolves the provider (a failure is the outcome, not an exception);
4. builds the mode's tools on the door's editor, checkpointing into the
   store, plus the MCP tools of the modes that have them, plus
   ``update_plan`` (each plan sent as a ``plan`` event);
5. completes a round a crash left open (the store's one resume entry point);
6. commits the prompt with its ``TurnStart`` before the first model call
   (unless the door kit did, with a new session);
7. drives the engine's turn loop (:func:`~rhema_lsp.runs.driver.drive`:
   commit-before-execute, a checkpoint per round, cancellation, the outcome);
8. runs the door's ``finish`` on a successful outcome (``rhema.edit``'s
   rewrite), counts the turn (``record_turn``), emits ``error`` when it
   failed and ``turn_end`` in every case, and closes the output. A turn whose
   prompt was never committed (no provider, a busy session) gives its
   reserved number back; a crash keeps it reserved.

Each commit point is named (:mod:`rhema_lsp.runs.points`) and reported to
``on_point`` (by default the environment's kill switch, for crash tests).
Sessions outside a turn (reopened, compacted) are :mod:`~rhema_lsp.runs.outside`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

import anyio

from rhema_lsp.engine import (
    Agent,
    ChatParams,
    ContextBudget,
    ErrorEvent,
    EventSink,
    ProviderError,
    Session,
    ThinkingEffort,
    ToolContext,
    ToolResolver,
    TurnEnd,
    refusal,
    support_of,
)
from rhema_lsp.mcp.catalog import MAX_TOOLS
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.resolver import mcp_instructions
from rhema_lsp.runs.driver import Outcome, drive
from rhema_lsp.runs.hook_config import Hooks, HookSet
from rhema_lsp.runs.hook_events import HookedTools, until_stopped
from rhema_lsp.runs.points import (
    COMPACTION_COMMITTED,
    INTENT_COMMITTED,
    LEASE_HELD,
    PROMPT_COMMITTED,
    RESUMED,
    TURN_RECORDED,
    PointHook,
    kill_switch,
)
from rhema_lsp.runs.project_rules import (
    RulesFile,
    RulesResolver,
    TurnRules,
    read_root_rules,
    rules_prompt,
    user_rules_path,
)
from rhema_lsp.runs.prompts import system_prompt
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.registry import Run, RunRegistry
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.skills import Skills, SkillShelf, skills_prompt
from rhema_lsp.runs.subagents import Tasks
from rhema_lsp.runs.workplace import Backend, BackendSource, Decorate, Plan, TurnOutput, Workplace
from rhema_lsp.sessions import SessionStore, SessionStoreError, TurnStart, title_from_prompt
from rhema_lsp.tools import Editor, Planning, Workspace, WorkspaceTools
from rhema_lsp.tools.gate import Gate
from rhema_lsp.vocabulary import Mode

__all__ = ["Finish", "TurnReport", "Turns"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

Finish = Callable[[Outcome, Run, WorkspaceTools], Awaitable[T]]
"""What a door does with a successful run's outcome before the turn ends,
with the run's tools (``rhema.edit`` applies its rewrite here)."""


@dataclass
class TurnReport(Generic[T]):
    """How a run ended: its turn, the outcome, what ``finish`` returned
    (``None`` when it did not run), and whether its prompt is stored."""

    ref: TurnRef
    outcome: Outcome
    finished: T | None = None
    started: bool = False


@dataclass
class _Budget:
    window: int | None
    budget: ContextBudget = field(init=False)

    def __post_init__(self) -> None:
        self.budget = ContextBudget(window=self.window)


class Turns:
    """Runs the turns of one front door (see the module docstring).

    Parameters
    ----------
    mcp
        The MCP servers the runs take tools from.
    on_point
        Told each commit point a turn passes (test instrumentation; by
        default :func:`~rhema_lsp.runs.points.kill_switch`, ``None`` unless
        ``RHEMA_KILL_AT`` is set).
    """

    def __init__(self, mcp: McpHub, *, on_point: PointHook | None = None) -> None:
        self.mcp = mcp
        self.on_point = on_point if on_point is not None else kill_switch()
        self._budgets: dict[str, _Budget] = {}
        self._rules: dict[Path, dict[str, RulesFile]] = {}
        """Per folder, the nested rules its turns gave (or refused), by name."""
        self.skills = SkillShelf(mcp.config_path)
        self.hooks = Hooks(mcp.config_path)
        self.runs: RunRegistry | None = None  # where subagents register (the door kit's)

    def _point(self, name: str) -> None:
        if self.on_point is not None:
            self.on_point(name)

    # -- what outlives a run ---------------------------------------------------

    def budget(self, session: str, backend: Backend, settings: Settings) -> ContextBudget:
        """The session's context budget: the ``contextWindow`` setting, else
        the provider's window; kept (with its calibration and any window a
        "too long" error revealed) while that configured window stays."""
        configured = settings.context_window or backend.context_window
        kept = self._budgets.get(session)
        if kept is None or kept.window != configured:
            kept = self._budgets[session] = _Budget(configured)
        kept.budget.threshold = settings.compact_threshold
        return kept.budget

    def forget(self, session: str) -> None:
        """Drop what is kept of a deleted session."""
        self._budgets.pop(session, None)

    async def rules(self, place: Workplace, tools: WorkspaceTools) -> TurnRules:
        """The project rules of a turn in ``place`` starting now: the user's
        file and the folder's, read again (see :mod:`~rhema_lsp.runs.project_rules`);
        what it gives is kept for :meth:`rules_in_use`."""
        user = user_rules_path(self.mcp.config_path)
        root = await read_root_rules(tools.gate, place.folder, user)
        return TurnRules(tools.gate, place.folder, root, self._rules.setdefault(place.folder, {}))

    async def rules_in_use(
        self, folder: Path, roots: Sequence[Path], editor: Editor
    ) -> list[RulesFile]:
        """The rules of ``folder`` (confined to ``roots``, read through
        ``editor``) as a turn starting now would read them, then the nested
        ones its turns gave or refused, by name."""
        gate = Gate(Workspace(list(roots) or [folder], folder), editor)
        root = await read_root_rules(gate, folder, user_rules_path(self.mcp.config_path))
        return root + list(self._rules.get(folder, {}).values())

    def agent(
        self,
        backend: Backend,
        settings: Settings,
        ref: TurnRef,
        resolver: ToolResolver | None,
        system: str,
        store: SessionStore | None = None,
    ) -> Agent:
        """The agent of a run on ``ref``'s session; with ``store``, its tool-use
        answers are committed before their tools run, and its compactions
        before their events are sent."""
        hook = compacted = None
        if store is not None:
            commit = store.commit_hook(ref.session)

            async def hook(session: Session) -> None:
                await commit(session)
                self._point(INTENT_COMMITTED)

            async def compacted(session: Session) -> None:
                await commit(session)
                self._point(COMPACTION_COMMITTED)

        return Agent(
            backend.provider,
            resolver=resolver,
            system=system,
            params=ChatParams(
                model=backend.model,
                max_tokens=settings.max_tokens,
                thinking=ThinkingEffort(settings.thinking),
            ),
            commit_hook=hook,
            compaction_hook=compacted,
            context=self.budget(ref.session, backend, settings),
        )

    # -- the turn --------------------------------------------------------------

    async def run(
        self,
        run: Run,
        plan: Plan,
        place: Workplace,
        backend: BackendSource,
        settings: Settings,
        output: TurnOutput,
        *,
        finish: Finish[T] | None = None,
        decorate: Decorate | None = None,
    ) -> TurnReport[T]:
        """Run ``plan`` as ``run`` to its end (see the module docstring).

        Raises
        ------
        SessionBusyError
            Another live holder (another window) has the session's lease.
        """
        ref = run.ref
        report: TurnReport[T] = TurnReport(ref, Outcome())
        try:
            return await self._run(
                run, plan, place, backend, settings, output, finish, decorate, report
            )
        finally:
            if plan.prompt is not None and not report.started:
                with anyio.CancelScope(shield=True):
                    await self._give_back(place.store, ref)

    async def _give_back(self, store: SessionStore, ref: TurnRef) -> None:
        """Return the number of a turn whose prompt was never stored."""
        try:
            await store.turn_numbers.release(ref.session, ref.turn)
        except SessionStoreError as exc:
            logger.warning("turn %s keeps its number: %s", ref, exc)

    async def _run(
        self,
        run: Run,
        plan: Plan,
        place: Workplace,
        backend: BackendSource,
        settings: Settings,
        output: TurnOutput,
        finish: Finish[T] | None,
        decorate: Decorate | None,
        report: TurnReport[T],
    ) -> TurnReport[T]:
        ref = run.ref
        async with place.store.lease(ref.session):
            self._point(LEASE_HELD)
            tools = place.tools(plan.mode, settings, self.on_point)
            sink = await output.open(ref)
            try:
                report.outcome = await self._lease_held(
                    run, plan, place, backend, settings, sink, tools, decorate, report
                )
                if finish is not None and report.outcome.error is None and not run.cancelled:
                    report.finished = await finish(report.outcome, run, tools)
            except SessionStoreError as exc:
                report.outcome = Outcome(stop_reason="error", error=str(exc))
            except Exception as exc:
                # A bug: the door still learns that the run ended, and how.
                logger.exception("run %s failed", ref)
                report.outcome = Outcome(stop_reason="error", error=f"internal error: {exc!r}")
                raise
            finally:
                outcome = report.outcome
                if outcome.error is not None:
                    sink.emit(ErrorEvent(message=outcome.error))
                sink.emit(
                    TurnEnd(
                        stop_reason=outcome.stop_reason,
                        text=outcome.text,
                        steps=outcome.steps,
                        usage=outcome.usage,
                    )
                )
                with anyio.CancelScope(shield=True):
                    await output.close(outcome)
        return report

    async def _lease_held(
        self,
        run: Run,
        plan: Plan,
        place: Workplace,
        backend_source: BackendSource,
        settings: Settings,
        sink: EventSink,
        tools: WorkspaceTools,
        decorate: Decorate | None,
        report: TurnReport[T],
    ) -> Outcome:
        try:
            backend = await backend_source()
        except ProviderError as exc:
            return Outcome(stop_reason="error", error=str(exc))
        refused = refusal(plan.images, support_of(backend.provider))
        if refused is not None:
            return Outcome(stop_reason="error", error=refused)
        store, ref = place.store, run.ref
        resolver: ToolResolver | None = None
        tasks: Tasks | None = None
        instructions = ""
        rules = await self.rules(place, tools)
        skills = await self.skills.read(place.folder) if plan.tools else None
        hooks = await self.hooks.load(place.folder, place.editor) if plan.tools else HookSet()
        roots = list(place.roots) or [place.folder]
        if plan.tools:
            resolver = await self._resolver(tools, plan.mode, place, backend, settings)
            instructions = mcp_instructions(resolver)
            if decorate is not None:
                resolver = decorate(tools, resolver)
            resolver = RulesResolver(resolver, rules, [spec.name for spec in tools.specs()])
            if skills is not None and skills.skills:
                resolver = Skills(resolver, skills)
                instructions += skills_prompt(skills)
            if plan.depth == 0:
                resolver = tasks = Tasks(resolver, self, run, plan, place, backend_source, settings)
                tasks.emit = sink
            resolver = Planning(resolver, sink.emit, limit=MAX_TOOLS)
            resolver = HookedTools(resolver, hooks, ref.session, place.folder, roots, place.editor)
        ctx = ToolContext(place.folder, ref.run_id, run.signal, settings.tool_output_cap)
        session, _ = await store.open_and_resume(ref.session, resolver, sink, ctx)
        rules.start(session, sink)
        self._point(RESUMED)
        if plan.prompt is not None:
            if not await store.turn_numbers.started(
                ref.session, ref.turn
            ):  # begin stored a new one's
                prompt = plan.message()
                assert prompt is not None
                session.history.append(prompt)
                start = TurnStart(ref.turn, title_from_prompt(plan.title))
                await store.commit(ref.session, session, turn=start)
            report.started = True
            self._point(PROMPT_COMMITTED)
        elif not session.history:
            return Outcome(stop_reason="error", error="nothing to continue: send a prompt")
        system = plan.system or system_prompt(plan.mode, place.folder)
        system += rules_prompt(rules.root) + instructions
        agent = self.agent(backend, settings, ref, resolver, system, store)
        outcome = await until_stopped(
            lambda: drive(
                agent,
                session,
                sink,
                ctx,
                run,
                store=store,
                max_steps=plan.max_steps,
                single_step=plan.single_step,
                on_point=self.on_point,
            ),
            session,
            HookSet() if plan.single_step else hooks,
            place.folder,
            roots,
            ref.session,
        )
        if tasks is not None:
            outcome.usage = outcome.usage + tasks.usage
        if plan.prompt is not None:
            with anyio.CancelScope(shield=True):
                await store.record_turn(ref.session, ref.turn, model=backend.model)
            self._point(TURN_RECORDED)
        return outcome

    async def _resolver(
        self,
        tools: WorkspaceTools,
        mode: Mode,
        place: Workplace,
        backend: Backend,
        settings: Settings,
    ) -> ToolResolver:
        return await self.mcp.resolver(
            tools,
            mode,
            place.folder,
            place.editor,
            backend.protocol,
            settings,
            given=place.client_servers,
            provider=backend.provider,
            model=backend.model,
            window=settings.context_window or backend.context_window,
        )
