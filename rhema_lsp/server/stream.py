"""One run's events on their way to the editor.

:class:`RunStream` is the engine's :class:`~rhema_lsp.engine.EventSink` for a
run. It turns events into ``rhema/event`` notifications (``seq`` rising by
one per notification within a session) and keeps the run's work-done
progress message current.

Deltas are merged by the run's :class:`~rhema_lsp.runs.merge.DeltaMerger`
(adjacent deltas of the same type and id become one notification, the usage
tally keeps its latest value); what it holds is flushed at the latest one
window (16 ms) after the first of it arrived, and at once before any other
event. A model streaming thousands of tokens a second so costs the editor
about 60 notifications a second, while nothing is dropped, reordered, or
held back longer than one window. The activity is tracked on what is sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from rhema_lsp.engine import (
    Event,
    ProviderToolUse,
    RetryWait,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolOutputDelta,
    ToolResultEvent,
)
from rhema_lsp.runs.merge import DeltaMerger
from rhema_lsp.tools.facts import main_value

__all__ = ["FLUSH_WINDOW", "RunStream", "describe_call"]

FLUSH_WINDOW = 0.016


def describe_call(name: str, args_text: str) -> str:
    """A short human description of a call: its name and main argument."""
    try:
        args = json.loads(args_text) if args_text else {}
    except ValueError:
        return name
    main = main_value(name, args)
    return f"{name} {main[1][:80]}" if main else name


class RunStream:
    """Sends one run's events to the editor, deltas merged.

    Parameters
    ----------
    send
        Sends one ``rhema/event`` params object.
    session
        The session id stamped on every notification.
    turn
        The turn number stamped on every notification.
    next_seq
        Returns the session's next sequence number.
    report
        Receives the run's current activity ("thinking", "writing",
        "read_file src/a.py", a retry countdown) whenever it changes.
    """

    def __init__(
        self,
        send: Callable[[dict[str, Any]], None],
        *,
        session: str,
        turn: int,
        next_seq: Callable[[], int],
        report: Callable[[str], None] | None = None,
    ) -> None:
        self._send = send
        self.session = session
        self.turn = turn
        self._next_seq = next_seq
        self._report = report
        self._merger = DeltaMerger(self._deliver)
        self._timer: asyncio.TimerHandle | None = None
        self._activity = ""
        self._call_names: dict[str, str] = {}
        self._call_args: dict[str, list[str]] = {}
        self.sent = 0

    def emit(self, event: Event) -> None:
        """Hold or send one event."""
        if self._merger.emit(event):
            if self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(FLUSH_WINDOW, self.flush)
        elif self._timer is not None:  # what was held went out before the event
            self._timer.cancel()
            self._timer = None

    def flush(self) -> None:
        """Send what the merger holds, if anything."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._merger.flush()

    def close(self) -> None:
        """Flush and stop the timer; call once the run is over."""
        self.flush()

    def _deliver(self, event: Event) -> None:
        self._track(event)
        self.sent += 1
        self._send(
            {
                "session": self.session,
                "turn": self.turn,
                "seq": self._next_seq(),
                "event": event.payload(),
            }
        )

    def _track(self, event: Event) -> None:
        if event.type == "step_start":
            self._set_activity("waiting for the model")
        elif isinstance(event, ThinkingDelta):
            self._set_activity("thinking")
        elif isinstance(event, TextDelta):
            self._set_activity("writing")
        elif isinstance(event, ToolCallStart):
            self._call_names[event.id] = event.name
            self._call_args.setdefault(event.id, [])
            self._set_activity(describe_call(event.name, "".join(self._call_args[event.id])))
        elif isinstance(event, ToolCallArgsDelta):
            parts = self._call_args.setdefault(event.id, [])
            if sum(map(len, parts)) < 4096:
                parts.append(event.delta)
        elif isinstance(event, ToolOutputDelta):
            name = self._call_names.get(event.id, "tool")
            args = "".join(self._call_args.get(event.id, []))
            self._set_activity(describe_call(name, args))
        elif isinstance(event, ToolResultEvent):
            self._call_args.pop(event.id, None)
            self._set_activity("waiting for the model")
        elif isinstance(event, ProviderToolUse):
            self._set_activity(f"{event.name} {event.detail}".strip())
        elif isinstance(event, RetryWait):
            self._set_activity(
                f"retrying in {event.delay_seconds:.0f}s (attempt {event.attempt}/{event.total})"
            )

    def _set_activity(self, activity: str) -> None:
        if activity != self._activity:
            self._activity = activity
            if self._report is not None:
                self._report(activity)
