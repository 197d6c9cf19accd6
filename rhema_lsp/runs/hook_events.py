"""Where each hook event happens in a turn, and what its decision does.

- ``SessionStart`` (a new session's first prompt) and ``UserPromptSubmit``
  (every prompt) run in the door kit before the turn is decided
  (:func:`prompt_hooks`, from :meth:`~rhema_lsp.runs.door.Door.expand`): a
  block refuses the prompt with the hook's reason *to the user*
  (:class:`PromptBlocked`, the door's error; nothing is stored); context
  they give is added to the prompt the model is sent.
- ``PreToolUse`` and ``PostToolUse`` run around every tool call of the turn
  (:class:`HookedTools`, the outermost resolver, so MCP tools, ``skill``
  and ``update_plan`` are matched too). Before: exit 2, ``deny`` or
  ``block`` keep the call from running and its result tells the model
  why; ``ask`` asks the user first (a hook's ``allow`` never skips one of
  our own approvals). After: the event carries ``tool_response``
  (``{content, is_error}``); a block, or context, is added to the result.
- ``Stop`` runs when the turn would end (:func:`stop_hooks`): a block keeps
  it going with the reason as the next user message, at most
  :data:`MAX_STOP_CONTINUATIONS` times (``stop_hook_active`` says so).

Every event's JSON has ``session_id``, ``cwd`` and ``hook_event_name``;
``tool_name`` is always our tool's name (``edit_file``), whatever name the
matcher used.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from rhema_lsp.engine import (
    DelegatingResolver,
    Message,
    Progress,
    Role,
    Session,
    StatusReporter,
    TextPart,
    ToolCall,
    ToolContext,
    ToolResolver,
    ToolResult,
)
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.runs.hook_config import HookSet
from rhema_lsp.runs.hook_runner import run_hooks, strongest
from rhema_lsp.tools.editor import Editor

__all__ = [
    "MAX_STOP_CONTINUATIONS",
    "HookedTools",
    "PromptBlocked",
    "prompt_hooks",
    "stop_hooks",
    "until_stopped",
]

MAX_STOP_CONTINUATIONS = 3
_ALLOW, _DENY = "Allow", "Deny"


class PromptBlocked(Exception):
    """A ``UserPromptSubmit`` or ``SessionStart`` hook refused the prompt."""


def event(name: str, session: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    """The JSON a hook of ``name`` reads on stdin."""
    return {"session_id": session, "cwd": str(cwd), "hook_event_name": name, **fields}


async def prompt_hooks(
    hooks: HookSet, prompt: str, session: str | None, cwd: Path, roots: Sequence[Path]
) -> str:
    """The context ``SessionStart`` (``session`` is ``None``: a new one) and
    ``UserPromptSubmit`` hooks add to ``prompt`` ("" for none).

    Raises
    ------
    PromptBlocked
        A hook refused the prompt (its reason is the message).
    """
    contexts: list[str] = []
    steps: list[tuple[str, dict[str, Any]]] = []
    if session is None:
        steps.append(("SessionStart", {"source": "startup"}))
    steps.append(("UserPromptSubmit", {"prompt": prompt}))
    for name, fields in steps:
        matching = hooks.matching(name)
        if not matching:
            continue
        runs = await run_hooks(matching, event(name, session or "", cwd, **fields), cwd, roots)
        verdict = strongest(runs, plain_context=True)
        if verdict.decision in ("block", "deny"):
            raise PromptBlocked(f"a {name} hook refused the prompt: {verdict.reason}")
        if verdict.context:
            contexts.append(verdict.context)
    return "\n".join(contexts)


async def stop_hooks(
    hooks: HookSet, session: str, cwd: Path, roots: Sequence[Path], continued: int
) -> str | None:
    """Why the turn must go on (a ``Stop`` hook's block), or ``None``."""
    matching = hooks.matching("Stop")
    if not matching or continued >= MAX_STOP_CONTINUATIONS:
        return None
    fields = {"stop_hook_active": continued > 0}
    runs = await run_hooks(matching, event("Stop", session, cwd, **fields), cwd, roots)
    verdict = strongest(runs)
    if verdict.decision != "block":
        return None
    return verdict.reason or "a Stop hook asks to go on"


async def until_stopped(
    turn: Callable[[], Awaitable[Outcome]],
    session: Session,
    hooks: HookSet,
    cwd: Path,
    roots: Sequence[Path],
    session_id: str,
) -> Outcome:
    """``turn`` run, and run again while a ``Stop`` hook blocks the end of a
    turn that ended normally (its reason the next user message); the steps
    and usage of every round added up."""
    outcome = await turn()
    for continued in range(MAX_STOP_CONTINUATIONS):
        if outcome.error is not None or outcome.stop_reason != "end_turn":
            break
        reason = await stop_hooks(hooks, session_id, cwd, roots, continued)
        if reason is None:
            break
        text = f"A Stop hook keeps the turn going: {reason}"
        session.history.append(Message(role=Role.USER, content=[TextPart(text=text)]))
        steps, usage = outcome.steps, outcome.usage
        outcome = await turn()
        outcome.steps, outcome.usage = outcome.steps + steps, usage + outcome.usage
    return outcome


class HookedTools(DelegatingResolver):
    """``inner``'s calls with the ``PreToolUse`` and ``PostToolUse`` hooks
    around each (see the module docstring)."""

    def __init__(
        self,
        inner: ToolResolver,
        hooks: HookSet,
        session: str,
        cwd: Path,
        roots: Sequence[Path],
        editor: Editor,
    ) -> None:
        super().__init__(inner)
        self.hooks = hooks
        self.session = session
        self.cwd = cwd
        self.roots = list(roots)
        self.editor = editor

    async def _run(self, name: str, call: ToolCall, **fields: Any) -> Any:
        matching = self.hooks.matching(name, call.name)
        if not matching:
            return None
        payload = event(
            name, self.session, self.cwd, tool_name=call.name, tool_input=call.args, **fields
        )
        return strongest(await run_hooks(matching, payload, self.cwd, self.roots))

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """The call, unless a ``PreToolUse`` hook keeps it from running; then
        the ``PostToolUse`` hooks on its result."""
        before = await self._run("PreToolUse", call)
        if before is not None:
            if before.decision in ("block", "deny"):
                return ToolResult.failure(
                    call.id, f"A PreToolUse hook blocked this call: {before.reason}"
                )
            if before.decision == "ask":
                answer = await self.editor.confirm(
                    f"A hook asks before {call.name} runs: {before.reason or 'confirm it'}. Allow?",
                    [_DENY, _ALLOW],
                )
                if answer != _ALLOW:
                    return ToolResult.failure(call.id, "The user did not allow this call.")
        result = await self.inner.resolve_streaming(call, ctx, progress, status)
        response = {"content": result.content, "is_error": result.is_error}
        after = await self._run("PostToolUse", call, tool_response=response)
        notes: list[str] = []
        if before is not None and before.context:
            notes.append(before.context)
        if after is not None:
            if after.decision == "block":
                notes.append(f"A PostToolUse hook says: {after.reason}")
            if after.context:
                notes.append(after.context)
        if not notes:
            return result
        return result.model_copy(update={"content": result.content + "\n\n" + "\n".join(notes)})
