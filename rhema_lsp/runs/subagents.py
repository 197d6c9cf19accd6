"""Subagents: the ``task`` tool, a child turn with a context of its own.

``task {description, prompt, agent?}`` (:class:`Tasks`, offered in every
mode of a turn that is not itself a child's) runs a *child turn* through the
same pipeline (:meth:`~rhema_lsp.runs.turn.Turns.run`): a new session,
stored, titled ``Task: <description>`` and linked to its parent by its id
(``<parent id>-task-<turn>-<n>``), whose only message is the task's ``prompt`` (the
parent's conversation is not sent), on the parent's provider and settings.
The parent's tool result is the child's final answer only; the child's
usage is added to the parent's (:attr:`Tasks.usage`). Calls in one step run
side by side (``task`` is concurrent). How the child is tied to its parent
(its events nested in the call, cancelled with the parent or alone, its
model) is :mod:`~rhema_lsp.runs.child_runs`.

**Tools.** A child is read-only (``ask`` mode) unless its agent definition
grants more, and never gets more than its parent's mode: the granted tools
(ours or Claude Code's names, :data:`~rhema_lsp.runs.hook_config.ALIASES`)
choose the least mode that has them all, capped at the parent's, and the
child is offered only those (plus ``update_plan`` and ``skill``). A child
gets no ``task`` tool itself.

**Agent definitions** (:func:`find_agents`): ``.rhema/agents/*.md`` and
``.claude/agents/*.md`` in the session folder, then the user's ``agents``
folder beside the user config file; front matter ``name``, ``description``,
``tools`` (a list, or names separated by commas), ``model`` (the child's
model on the parent's provider: :func:`~rhema_lsp.runs.child_runs.child_backend`);
the body joins the child's system prompt. Read like skills (:mod:`~rhema_lsp.runs.extension_files`):
confined, capped, a malformed file left out and reported.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

import anyio
import anyio.to_thread
from pydantic import Field

from rhema_lsp.engine import (
    DelegatingResolver,
    EventSink,
    Progress,
    ReplaySafety,
    StatusReporter,
    ToolCall,
    ToolContext,
    ToolResolver,
    ToolResult,
    ToolSpec,
    Usage,
)
from rhema_lsp.runs.child_runs import (
    CANCELLED,
    ChildOutput,
    child_backend,
    child_run,
    follow_parent,
    new_child_id,
)
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.runs.extension_files import (
    MAX_ENTRIES,
    read_text_file,
    split_front_matter,
    text_of,
    workspace_dir,
)
from rhema_lsp.runs.hook_config import ALIASES, Hooks
from rhema_lsp.runs.prompts import system_prompt
from rhema_lsp.runs.registry import Run, RunRegistry
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.skills import NAME, SkillProblem, user_extension_dir
from rhema_lsp.runs.workplace import BackendSource, Plan, Workplace
from rhema_lsp.tools import WorkspaceTools
from rhema_lsp.tools.arguments import ToolArguments
from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.own_tool import OwnToolResolver
from rhema_lsp.tools.specs import TOOLS_BY_MODE
from rhema_lsp.vocabulary import MODES, Mode

__all__ = ["AGENT_DIRS", "TASK", "AgentDef", "TaskArgs", "Tasks", "child_mode", "find_agents"]

TASK = "task"
AGENT_DIRS = (".rhema/agents", ".claude/agents")


@dataclass(frozen=True, slots=True)
class AgentDef:
    """One agent definition (see the module docstring)."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    model: str | None = None


def _read_agent(path: Path, base: Path, workspace: bool) -> AgentDef | SkillProblem:
    read = read_text_file(path, base, workspace=workspace)
    if read.problem is not None:
        return SkillProblem(str(path), read.problem)
    try:
        matter, body = split_front_matter(read.text)
    except ValueError as exc:
        return SkillProblem(str(path), str(exc))
    name = text_of(matter, "name").strip() or path.stem
    if not NAME.match(name):
        return SkillProblem(str(path), f"its name {name[:80]!r} is not letters, digits and -_.:")
    raw = matter.get("tools")
    tools = None
    if raw:
        listed = raw if isinstance(raw, list) else raw.split(",")
        tools = tuple(item.strip() for item in listed if item.strip())
    description = text_of(matter, "description").strip()
    return AgentDef(name, description, body.strip(), tools, text_of(matter, "model") or None)


def find_agents(folder: Path, config_path: Path | None) -> tuple[dict[str, AgentDef], list[str]]:
    """The agent definitions of ``folder`` and the user's, by name (nearer
    first), and the problems. Blocking: call it in a worker thread."""
    places = [(p, True) for r in AGENT_DIRS if (p := workspace_dir(folder, r)) is not None]
    user = user_extension_dir("agents", config_path)
    if user.is_dir():
        places.append((user.resolve(), False))
    agents: dict[str, AgentDef] = {}
    problems: list[str] = []
    for base, workspace in places:
        for path in sorted(base.glob("*.md"))[:MAX_ENTRIES]:
            made = _read_agent(path, base, workspace)
            if isinstance(made, SkillProblem):
                problems.append(f"{made.shown} {made.problem}")
            else:
                agents.setdefault(made.name, made)
    return agents, problems


def _ours(names: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for name in names:
        found.update(ALIASES.get(name, (name,)))
    return found


def child_mode(parent: Mode, agent: AgentDef | None) -> tuple[Mode, set[str] | None]:
    """A child's mode and the tools it may use (``None``: all of the mode's)."""
    if agent is None or agent.tools is None:
        return "ask", None
    wanted = _ours(agent.tools)
    cap = MODES.index(parent)
    for mode in MODES[: cap + 1]:
        if wanted <= set(TOOLS_BY_MODE[mode]):
            return mode, wanted
    return MODES[cap] if cap else "ask", wanted


class TaskArgs(ToolArguments):
    """Arguments of ``task``."""

    tool_name = TASK
    tool_description = (
        "Hand a self-contained task to a subagent with a fresh context: it sees only your "
        "`prompt` (give it every detail it needs), works with read-only tools unless its "
        "agent allows more, and returns only its final answer. Use it for broad searches "
        "or research that would fill your context; several task calls run in parallel."
    )

    description: str = Field(description="A short (3-5 word) title of the task.")
    prompt: str = Field(description="The whole task for the subagent.")
    agent: str | None = Field(default=None, description="An agent definition's name (optional).")


class TurnRunner(Protocol):
    """The pipeline as a child needs it (:class:`~rhema_lsp.runs.turn.Turns`)."""

    @property
    def hooks(self) -> Hooks: ...

    @property
    def runs(self) -> RunRegistry | None: ...

    async def run(
        self,
        run: Run,
        plan: Plan,
        place: Workplace,
        backend: BackendSource,
        settings: Settings,
        output: Any,
        *,
        finish: Any = None,
        decorate: Any = None,
    ) -> Any: ...


class _Only(DelegatingResolver):
    def __init__(self, inner: ToolResolver, allowed: set[str]) -> None:
        super().__init__(inner)
        self.allowed = allowed

    def specs(self) -> list[ToolSpec]:
        return [spec for spec in self.inner.specs() if spec.name in self.allowed]

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        if call.name not in self.allowed:
            return ToolResult.failure(call.id, f"{call.name} is not among this agent's tools")
        return await self.inner.resolve_streaming(call, ctx, progress, status)


@dataclass
class Tasks(OwnToolResolver):
    """``inner``'s tools plus ``task`` (see the module docstring)."""

    inner: ToolResolver
    turns: TurnRunner
    parent: Run
    parent_plan: Plan
    place: Workplace
    backend: BackendSource
    settings: Settings
    emit: EventSink | None = None
    """The parent's sink, which the children's events reach (:mod:`.child_runs`)."""
    usage: Usage = field(default_factory=Usage)
    _numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    safety: ClassVar[ReplaySafety] = ReplaySafety.UNSAFE
    """A task is not run again after a crash."""

    def own_spec(self) -> ToolSpec:
        """``task``; tasks run side by side."""
        return TaskArgs.spec()

    async def own(self, call: ToolCall, progress: Progress) -> ToolResult:
        """Run a child turn."""
        return await self._child(call.id, TaskArgs.parse(call.args), progress)

    async def _child(self, call_id: str, args: TaskArgs, progress: Progress) -> ToolResult:
        agent = None
        if args.agent:
            config = self.turns.hooks.config_path
            found, _ = await anyio.to_thread.run_sync(find_agents, self.place.folder, config)
            agent = found.get(args.agent)
            if agent is None:
                raise ToolError(f"no agent {args.agent!r}; the agents: {', '.join(found)}")
        mode, allowed = child_mode(self.parent_plan.mode, agent)
        system = None
        if agent is not None and agent.prompt:
            system = f"{system_prompt(mode, self.place.folder)}\n\n{agent.prompt}"
        plan = Plan(
            prompt=args.prompt,
            title=f"Task: {args.description}",
            mode=mode,
            max_steps=self.settings.max_steps,
            system=system,
            depth=1,
        )
        child_id = await new_child_id(self.place.store, self.parent, self._numbers)
        await self.place.store.create(plan.title, session_id=child_id, first=plan.message())
        decorate: Callable[[WorkspaceTools, ToolResolver], ToolResolver] | None = None
        if allowed is not None:
            granted = allowed

            def decorate(_tools: WorkspaceTools, resolver: ToolResolver) -> ToolResolver:
                return _Only(resolver, granted)

        output = ChildOutput(call_id, child_id, progress, self.emit)
        backend = child_backend(self.backend, agent.model if agent is not None else None)
        child = child_run(self.parent, child_id, self.turns.runs)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(follow_parent, self.parent, child)
                report = await self.turns.run(
                    child, plan, self.place, backend, self.settings, output, decorate=decorate
                )
                group.cancel_scope.cancel()
        finally:
            if self.turns.runs is not None:
                self.turns.runs.remove(child)
        outcome: Outcome = report.outcome
        self.usage = self.usage + outcome.usage
        if outcome.error is not None:
            return ToolResult.failure(call_id, f"The subagent failed: {outcome.error}")
        if outcome.stop_reason == "cancelled":
            return ToolResult.failure(call_id, CANCELLED + (outcome.text or "(none)"))
        return ToolResult.success(call_id, outcome.text or "(the subagent gave no answer)")
