"""RunStream: deltas merge per (type, id) within one window, nothing is
dropped or reordered, and any other event flushes first."""

from __future__ import annotations

from typing import Any

import anyio

from rhema_lsp.engine import (
    StepEnd,
    StepStart,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolOutputDelta,
    Usage,
    UsageUpdate,
)
from rhema_lsp.server.stream import FLUSH_WINDOW, RunStream


def make_stream() -> tuple[RunStream, list[dict[str, Any]], list[str]]:
    sent: list[dict[str, Any]] = []
    activities: list[str] = []
    counter = iter(range(1, 10_000))
    stream = RunStream(
        sent.append, session="s", turn=1, next_seq=lambda: next(counter), report=activities.append
    )
    return stream, sent, activities


async def test_adjacent_deltas_merge_and_other_events_flush_first() -> None:
    stream, sent, _ = make_stream()
    stream.emit(StepStart(iteration=0))
    for word in ("one ", "two ", "three"):
        stream.emit(TextDelta(text=word))
    stream.emit(ThinkingDelta(text="hm"))
    stream.emit(ToolCallStart(id="c1", name="read_file"))
    stream.emit(ToolCallArgsDelta(id="c1", delta='{"pa'))
    stream.emit(ToolCallArgsDelta(id="c1", delta='th": "a"}'))
    stream.emit(ToolCallArgsDelta(id="c2", delta="{}"))
    stream.emit(StepEnd(usage=Usage(input=1, output=2), stop_reason=StopReason.TOOL_USE))

    events = [item["event"] for item in sent]
    assert events == [
        {"type": "step_start", "iteration": 0},
        {"type": "text_delta", "text": "one two three"},
        {"type": "thinking_delta", "text": "hm"},
        {"type": "tool_call_start", "id": "c1", "name": "read_file"},
        {"type": "tool_call_args_delta", "id": "c1", "delta": '{"path": "a"}'},
        {"type": "tool_call_args_delta", "id": "c2", "delta": "{}"},
        {
            "type": "step_end",
            "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
            "stopReason": "tool_use",
        },
    ]
    assert [item["seq"] for item in sent] == list(range(1, 8))
    assert {(item["session"], item["turn"]) for item in sent} == {("s", 1)}


async def test_a_pending_delta_is_sent_after_one_window() -> None:
    stream, sent, _ = make_stream()
    stream.emit(ToolOutputDelta(id="c1", chunk="line 1\n"))
    stream.emit(ToolOutputDelta(id="c1", chunk="line 2\n"))
    assert sent == []
    await anyio.sleep(FLUSH_WINDOW * 4)
    assert [item["event"] for item in sent] == [
        {"type": "tool_output_delta", "id": "c1", "chunk": "line 1\nline 2\n"}
    ]
    stream.emit(ToolOutputDelta(id="c1", chunk="line 3\n"))
    stream.close()
    assert sent[-1]["event"]["chunk"] == "line 3\n"


async def test_the_activity_follows_the_run() -> None:
    stream, _, activities = make_stream()
    stream.emit(StepStart(iteration=0))
    stream.emit(ThinkingDelta(text="a"))
    stream.emit(ThinkingDelta(text="b"))
    stream.emit(TextDelta(text="c"))
    stream.emit(ToolCallStart(id="c1", name="grep"))
    stream.close()
    assert activities == ["waiting for the model", "thinking", "writing", "grep"]


async def test_the_usage_tally_rides_with_the_deltas_and_keeps_its_latest_value() -> None:
    stream, sent, _ = make_stream()
    stream.emit(TextDelta(text="a"))
    stream.emit(UsageUpdate(Usage(input=3, output=1)))
    stream.emit(TextDelta(text="b"))
    stream.emit(UsageUpdate(Usage(input=3, output=2)))
    assert sent == []
    await anyio.sleep(FLUSH_WINDOW * 4)
    assert [item["event"] for item in sent] == [
        {"type": "text_delta", "text": "ab"},
        {"type": "usage", "input": 3, "output": 2, "cacheRead": 0, "cacheWrite": 0},
    ]
    assert [item["seq"] for item in sent] == [1, 2]
