"""A session's transcript as Markdown, for clients that do not render events.

One file per session, ``transcripts/<session>.md`` beside the session store
(so it is ignored by git and out of the agent's reach like the store): each
turn's prompt, its reasoning, the answer, one line per tool call (a
``task`` call's subagent's calls each on an indented line, as they end), and the
turn's plan as a Markdown task list, ticked in place as it changes. The
file is rewritten atomically (write a temporary file, rename) at most every
:data:`FLUSH_EVERY` seconds while a run streams and once when it ends, in a
worker thread, so the event loop never waits on the disk. Reads and writes
walk from the store's folder without following a link
(:class:`~rhema_lsp.tools.confined_fs.ConfinedFS`): a ``transcripts`` link a
repository carries is refused, never written through.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import anyio.to_thread

from rhema_lsp.engine import (
    ChildEvent,
    ErrorEvent,
    Event,
    PlanEntry,
    PlanUpdate,
    ProviderToolUse,
    StepStart,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolResultEvent,
    TurnEnd,
)
from rhema_lsp.runs.child_steps import ChildSteps
from rhema_lsp.server.stream import describe_call
from rhema_lsp.tools import ToolError
from rhema_lsp.tools.confined_fs import ConfinedFS

__all__ = ["FLUSH_EVERY", "Transcript", "first_lines"]

logger = logging.getLogger(__name__)

FLUSH_EVERY = 0.5
"""Seconds between rewrites of the file while a run streams."""


def first_lines(text: str, lines: int = 3, chars: int = 300) -> str:
    """The start of ``text`` for a one-glance message."""
    head = "\n".join(line for line in text.strip().splitlines()[:lines])
    return head if len(head) <= chars else head[: chars - 1] + "…"


class Transcript:
    """The transcript of one session, extended by one run's events.

    Parameters
    ----------
    path
        The session's transcript file, ``<store folder>/transcripts/<session>.md``
        (created with its folder).
    turn
        The run's turn number.
    prompt
        What the user asked (``None``: the run continues a turn).
    """

    def __init__(self, path: Path, turn: int, prompt: str | None) -> None:
        self.path = path
        self._fs = ConfinedFS([path.parent.parent])
        self._before = ""
        self._parts: list[str] = []
        self._mode = ""
        self._calls: dict[str, str] = {}
        self._args: dict[str, list[str]] = {}
        self._plan_at: int | None = None
        self._children: dict[str, ChildSteps] = {}
        self.answer: list[str] = []
        self.plan: tuple[PlanEntry, ...] = ()
        """The turn's latest plan (none: the turn made none)."""
        self._dirty = False
        self._timer: asyncio.TimerHandle | None = None
        self._writing: asyncio.Task[None] | None = None
        heading = f"\n## Turn {turn}\n\n"
        if prompt is not None:
            quoted = "\n".join(f"> {line}" for line in prompt.strip().splitlines())
            heading += f"{quoted}\n"
        self._parts.append(heading)

    async def open(self) -> None:
        """Load what earlier turns wrote."""
        try:
            self._before = await anyio.to_thread.run_sync(self._read)
        except ToolError as exc:
            logger.warning("could not read the transcript %s: %s", self.path, exc)
            self._before = f"# Rhema session {self.path.stem}\n"

    def _read(self) -> str:
        if self._fs.lstat(self.path) is None:
            return f"# Rhema session {self.path.stem}\n"
        data, _size = self._fs.read_bytes(self.path)
        return data.decode("utf-8", errors="replace")

    # -- events ------------------------------------------------------------

    def emit(self, event: Event) -> None:
        """Add one event to the transcript."""
        if isinstance(event, ThinkingDelta):
            self._enter("thinking")
            self._parts.append(event.text.replace("\n", "\n> "))
        elif isinstance(event, TextDelta):
            self._enter("text")
            self._parts.append(event.text)
            self.answer.append(event.text)
        elif isinstance(event, StepStart):
            self.answer = []
        elif isinstance(event, ToolCallStart):
            self._calls[event.id] = event.name
        elif isinstance(event, ToolCallArgsDelta):
            self._args.setdefault(event.id, []).append(event.delta)
        elif isinstance(event, PlanUpdate):
            self.plan = event.entries
            self._show_plan(event)
        elif isinstance(event, ToolResultEvent):
            name = self._calls.get(event.id, event.name)
            if name == "update_plan" and not event.is_error:
                return  # the plan above says it
            call = describe_call(name, "".join(self._args.pop(event.id, [])))
            mark = "✗" if event.is_error else "✓"
            summary = first_lines(event.content, 1, 120)
            self._line(f"- {mark} `{call}` — {summary}")
        elif isinstance(event, ProviderToolUse):
            self._line(f"- {event.name}: {event.detail}")
        elif isinstance(event, ErrorEvent):
            self._line(f"**Error:** {event.message}")
        elif isinstance(event, TurnEnd):
            self._line(f"*— {event.stop_reason.replace('_', ' ')}, {event.steps} step(s)*")
        elif isinstance(event, ChildEvent) and isinstance(event.event, ToolResultEvent):
            steps = self._children.setdefault(event.id, ChildSteps())
            steps.take(event.event)
            self._line(f"  - ↳ {steps.line(event.event.id)}")
        elif isinstance(event, ChildEvent):
            self._children.setdefault(event.id, ChildSteps()).take(event.event)
            return
        else:
            return
        self._changed()

    def _show_plan(self, event: PlanUpdate) -> None:
        """The turn's plan, in the place it was first shown."""
        lines = ["\n\n**Plan**\n"]
        for entry in event.entries:
            if entry.status == "completed":
                lines.append(f"- [x] {entry.content}")
            elif entry.status == "in_progress":
                lines.append(f"- [ ] **{entry.content}** (in progress)")
            else:
                lines.append(f"- [ ] {entry.content}")
        block = "\n".join(lines) + "\n"
        self._mode = ""
        if self._plan_at is None:
            self._plan_at = len(self._parts)
            self._parts.append(block)
        else:
            self._parts[self._plan_at] = block

    def _enter(self, mode: str) -> None:
        if mode != self._mode:
            self._parts.append("\n\n> " if mode == "thinking" else "\n\n")
            self._mode = mode

    def _line(self, line: str) -> None:
        self._mode = ""
        self._parts.append(f"\n\n{line}\n")

    # -- writing -----------------------------------------------------------

    def _changed(self) -> None:
        self._dirty = True
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FLUSH_EVERY, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if self._writing is None or self._writing.done():
            self._writing = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        text = self._before + "".join(self._parts)
        try:
            await anyio.to_thread.run_sync(self._replace, text)
        except ToolError as exc:
            logger.warning("could not write the transcript %s: %s", self.path, exc)

    def _replace(self, text: str) -> None:
        self._fs.write_atomic(self.path, text.encode("utf-8"))

    async def flush(self) -> None:
        """Write the current state now (after a write in flight)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._writing is not None:
            await self._writing
        self._dirty = True
        await self._write()
