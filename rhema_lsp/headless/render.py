"""How a run looks in a terminal.

The answer text goes to stdout as it streams, and nothing else does, so
``rhema-lsp ask ... > answer.md`` captures the answer alone. Reasoning
(dimmed), one line per tool call, command output, the plan (the whole
checklist when it is set, then one line per step whose status changes),
retry countdowns, the diffs of applied edits, compactions and the closing
line (with the context fill) go to stderr. Colour only on a
TTY. ``--json`` replaces all of it with one JSON line per ``rhema/event`` on
stdout; the client's own lines (the provider, diffs, the closing line of a
run the server could not end) still go to stderr.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TextIO

from rhema_lsp.contract import (
    CompactionPayload,
    ContextPayload,
    ErrorPayload,
    EventPayload,
    PlanPayload,
    ProviderToolPayload,
    RetryWaitPayload,
    RhemaEventParams,
    RulesPayload,
    SubagentPayload,
    TextDeltaPayload,
    ThinkingDeltaPayload,
    ToolCallArgsDeltaPayload,
    ToolCallStartPayload,
    ToolOutputDeltaPayload,
    ToolResultPayload,
    TurnEndPayload,
)
from rhema_lsp.tools.facts import main_value
from rhema_lsp.vocabulary import PlanStatus

__all__ = ["JsonRenderer", "TerminalRenderer"]

DIM, BOLD, RED, GREEN, CYAN, RESET = (
    "\x1b[2m",
    "\x1b[1m",
    "\x1b[31m",
    "\x1b[32m",
    "\x1b[36m",
    "\x1b[0m",
)

PLAN_MARKS: dict[PlanStatus, str] = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
"""How each plan status reads in the terminal's checklist."""


def _args_hint(name: str, args_text: str) -> str:
    try:
        args = json.loads(args_text) if args_text else {}
    except ValueError:
        return ""
    main = main_value(name, args)
    if main is None:
        return ""
    value = main[1]
    return value if len(value) <= 80 else value[:77] + "..."


def _summary(content: str) -> str:
    first = content.strip().splitlines()[0] if content.strip() else "(empty)"
    lines = content.count("\n") + 1
    return first[:100] + (f" (+{lines - 1} lines)" if lines > 1 else "")


@dataclass
class TerminalRenderer:
    """Renders events for a person at a terminal (or a log)."""

    out: TextIO
    err: TextIO
    color: bool
    show_thinking: bool = True
    _in_thinking: bool = False
    _text_open: bool = False
    _calls: dict[str, str] = field(default_factory=dict)
    _args: dict[str, list[str]] = field(default_factory=dict)
    _fill: str = ""
    _plan: list[tuple[str, PlanStatus]] = field(default_factory=list)
    _echoed: bool = False
    first_output: bool = False

    def _c(self, code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def _end_thinking(self) -> bool:
        if self._in_thinking:
            self.err.write("\n")
            self.err.flush()
            self._in_thinking = False
            return True
        return False

    def _end_text(self) -> bool:
        if self._text_open:
            self.out.write("\n")
            self.out.flush()
            self._text_open = False
            return True
        return False

    def interrupted(self) -> None:
        """The terminal echoed ``^C`` where the cursor was (and a second one
        may have flushed output it had not shown yet): the next note starts
        a line of its own."""
        self._echoed = True

    def note(self, line: str) -> None:
        """A line of the client's own (diffs, confirmations)."""
        ended = self._end_thinking() | self._end_text()
        if self._echoed and not ended:
            line = "\n" + line
        self._echoed = False
        self.err.write(line + "\n")
        self.err.flush()

    def _subagent(self, event: SubagentPayload) -> None:
        """A subagent's calls, each on an indented line as it ends (its
        answer is the task's result)."""
        inner = event.event
        if isinstance(inner, ToolCallArgsDeltaPayload):
            self._args.setdefault(inner.id, []).append(inner.delta)
        elif isinstance(inner, ToolResultPayload):
            hint = _args_hint(inner.name, "".join(self._args.pop(inner.id, [])))
            mark = self._c(RED, "✗") if inner.is_error else self._c(GREEN, "✓")
            self.note(f"  ↳ {mark} {self._c(CYAN, inner.name)} {hint}".rstrip())

    def notification(self, params: RhemaEventParams) -> None:
        """Render one ``rhema/event`` notification."""
        self.event(params.event)

    def event(self, event: EventPayload) -> None:
        """Render one event."""
        if isinstance(event, ThinkingDeltaPayload | TextDeltaPayload | ToolCallStartPayload):
            self.first_output = True
        if isinstance(event, ThinkingDeltaPayload):
            if not self.show_thinking:
                return
            self._end_text()
            if not self._in_thinking:
                self.err.write(self._c(DIM, "thinking: "))
                self._in_thinking = True
            self.err.write(self._c(DIM, event.text))
            self.err.flush()
        elif isinstance(event, TextDeltaPayload):
            self._end_thinking()
            self.out.write(event.text)
            self.out.flush()
            self._text_open = not event.text.endswith("\n")
        elif isinstance(event, ToolCallStartPayload):
            self._calls[event.id] = event.name
            self._args[event.id] = []
        elif isinstance(event, ToolCallArgsDeltaPayload):
            self._args.setdefault(event.id, []).append(event.delta)
        elif isinstance(event, ToolOutputDeltaPayload):
            self._end_thinking()
            self._end_text()
            self.err.write(self._c(DIM, event.chunk))
            self.err.flush()
        elif isinstance(event, PlanPayload):
            self._show_plan(event)
        elif isinstance(event, ToolResultPayload):
            name = event.name or self._calls.get(event.id, "tool")
            if name == "update_plan" and not event.is_error:
                return  # the plan's own lines say it
            hint = _args_hint(name, "".join(self._args.pop(event.id, [])))
            mark = self._c(RED, "✗") if event.is_error else self._c(GREEN, "✓")
            code = f" exit {event.code}" if event.code is not None else ""
            self.note(f"{mark} {self._c(CYAN, name)} {hint}{code} — {_summary(event.content)}")
        elif isinstance(event, ProviderToolPayload):
            self.note(f"· {self._c(CYAN, event.name)} {event.detail}".rstrip())
        elif isinstance(event, RetryWaitPayload):
            self.note(
                f"… {event.error}; retrying in {event.delay_seconds:.1f}s "
                f"(attempt {event.attempt}/{event.total})"
            )
        elif isinstance(event, CompactionPayload):
            self.note(
                self._c(
                    DIM,
                    f"⇣ compacted the conversation: {event.before} → {event.after} tokens"
                    f" (summary {event.summary_tokens})",
                )
            )
        elif isinstance(event, ContextPayload):
            window = event.window
            self._fill = (
                f" · context {event.tokens}/{window} ({100 * event.tokens // window}%)"
                if window
                else f" · context {event.tokens}"
            )
        elif isinstance(event, RulesPayload):
            self.note(self._c(DIM, f"rules: {', '.join(event.files)}"))
        elif isinstance(event, SubagentPayload):
            self._subagent(event)
        elif isinstance(event, ErrorPayload):
            self.note(self._c(RED, f"error: {event.message}"))
        elif isinstance(event, TurnEndPayload):
            self.note(
                self._c(
                    DIM,
                    f"— {event.stop_reason.replace('_', ' ')} · {event.steps} step(s) · "
                    f"{event.usage.input} in / {event.usage.output} out tokens{self._fill}",
                )
            )

    def _show_plan(self, event: PlanPayload) -> None:
        """The whole checklist when its steps are new, else a line per
        step whose status changed, with the count done."""
        plan = [(entry.content, entry.status) for entry in event.entries]
        before, self._plan = self._plan, plan
        done = sum(status == "completed" for _, status in plan)
        count = f"{done}/{len(plan)}"
        if [content for content, _ in before] != [content for content, _ in plan]:
            self.note(self._c(BOLD, f"plan ({count} done):"))
            for content, status in plan:
                self.note(f"  {PLAN_MARKS[status]} {content}")
            return
        for (content, status), (_, was) in zip(plan, before, strict=True):
            if status != was:
                self.note(f"{PLAN_MARKS[status]} {content} ({count} done)")


@dataclass
class JsonRenderer:
    """One JSON line per ``rhema/event`` notification, for scripts."""

    out: TextIO
    err: TextIO
    first_output: bool = True
    _echoed: bool = False

    def interrupted(self) -> None:
        """The terminal echoed ``^C``: the next note starts a line of its own."""
        self._echoed = True

    def note(self, line: str) -> None:
        """Client notes are not part of the JSON stream: they go to stderr."""
        self.err.write(("\n" if self._echoed else "") + line + "\n")
        self._echoed = False
        self.err.flush()

    def notification(self, params: RhemaEventParams) -> None:
        """The notification's params, as the server sent them."""
        wire = params.model_dump(mode="json", by_alias=True, exclude_unset=True)
        self.out.write(json.dumps(wire, ensure_ascii=False) + "\n")
        self.out.flush()
