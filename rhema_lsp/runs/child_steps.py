"""A subagent's steps as text, for the clients that show them as text.

An ACP client shows a ``task`` call's child as the call's content, and a
plain LSP client's transcript shows it under the call's line; both read a
:class:`ChildSteps` fed the child's events (the
:class:`~rhema_lsp.engine.ChildEvent` wrapped ones, unwrapped): one line per
child tool call (its name and main argument, ``…`` while it runs, then ✓ or
✗), the child's answer as it streams (the last step's text), and how the
child ended. What it shows is bounded (:data:`MAX_LINES` calls, the answer's
tail :data:`ANSWER_SHOWN`), however long the child runs.
"""

from __future__ import annotations

import json

from rhema_lsp.engine import (
    ErrorEvent,
    Event,
    StepStart,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolResultEvent,
    TurnEnd,
)
from rhema_lsp.tools.facts import main_value

__all__ = ["ANSWER_SHOWN", "MAX_LINES", "ChildSteps", "call_line"]

MAX_LINES = 40
"""Tool call lines shown (the latest ones)."""

ANSWER_SHOWN = 2_000
"""Characters of the child's answer shown (its tail)."""


def call_line(name: str, args_text: str) -> str:
    """A call's name and its main argument, on one line."""
    try:
        args = json.loads(args_text) if args_text else {}
    except ValueError:
        args = {}
    main = main_value(name, args) if isinstance(args, dict) else None
    return f"{name} {main[1][:80]}" if main else name


class ChildSteps:
    """What a child run has done so far, as Markdown (see the module docstring)."""

    def __init__(self) -> None:
        self._calls: dict[str, list[str]] = {}
        """Per call id: its name, its arguments so far, its mark."""
        self._order: list[str] = []
        self._answer: list[str] = []
        self.ended: str | None = None
        """How the child ended (its ``turn_end``'s stop reason), ``None`` while it runs."""
        self._error = ""

    def take(self, event: Event) -> bool:
        """Take one of the child's events; whether what is shown changed."""
        if isinstance(event, ToolCallStart):
            self._calls[event.id] = [event.name, "", "…"]
            self._order.append(event.id)
        elif isinstance(event, ToolCallArgsDelta):
            call = self._calls.get(event.id)
            if call is not None and len(call[1]) < 4096:
                call[1] += event.delta
            return False
        elif isinstance(event, ToolResultEvent):
            call = self._calls.setdefault(event.id, [event.name, "", ""])
            call[2] = "✗" if event.is_error else "✓"
        elif isinstance(event, StepStart):
            self._answer = []
            return False
        elif isinstance(event, TextDelta):
            self._answer.append(event.text)
        elif isinstance(event, ErrorEvent):
            self._error = event.message
        elif isinstance(event, TurnEnd):
            self.ended = event.stop_reason
        else:
            return False
        return True

    def line(self, call_id: str) -> str:
        """The line of the call ``call_id``: its mark, name and main argument."""
        name, args, mark = self._calls.get(call_id, ["tool", "", "?"])
        return f"{mark} {call_line(name, args)}"

    def lines(self) -> list[str]:
        """One line per call (the latest :data:`MAX_LINES`)."""
        return [self.line(call_id) for call_id in self._order[-MAX_LINES:]]

    @property
    def answer(self) -> str:
        """The child's answer so far (its tail)."""
        text = "".join(self._answer).strip()
        return text if len(text) <= ANSWER_SHOWN else "…" + text[-ANSWER_SHOWN:]

    def markdown(self) -> str:
        """Everything shown, as Markdown."""
        parts = []
        lines = self.lines()
        if lines:
            parts.append("\n".join(f"- {line}" for line in lines))
        if self.answer:
            parts.append("\n".join(f"> {line}" for line in self.answer.splitlines()))
        if self._error:
            parts.append(f"**Error:** {self._error}")
        if self.ended is not None:
            parts.append(f"*subagent {self.ended.replace('_', ' ')}*")
        elif not parts:
            parts.append("*subagent starting…*")
        return "\n\n".join(parts)
