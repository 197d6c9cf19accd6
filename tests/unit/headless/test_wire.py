"""The headless client reads events and results by the contract's models:
what the server's own events produce renders (a subagent's calls indented
under its task), and a drift fails loudly."""

from __future__ import annotations

import io
import json

import pytest

from rhema_lsp.contract import SessionSummary, TurnResult
from rhema_lsp.engine import (
    ChildEvent,
    Event,
    StopReason,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolResultEvent,
    TurnEnd,
    Usage,
)
from rhema_lsp.headless.render import JsonRenderer, TerminalRenderer
from rhema_lsp.headless.wire import ContractDrift, read_event, read_result

EVENTS: list[Event] = [
    TextDelta("Hello\n"),
    ToolCallStart("c1", "read_file"),
    ToolCallArgsDelta("c1", '{"path": "a.py"}'),
    ToolResultEvent("c1", "read_file", "x = 1\ny = 2", is_error=False),
    TurnEnd(
        stop_reason=StopReason.END_TURN, text="Hello\n", steps=2, usage=Usage(input=5, output=7)
    ),
]


SUMMARY: dict[str, object] = {
    "session": "s",
    "folder": "/f",
    "title": "t",
    "createdAt": "x",
    "turns": 1,
    "running": False,
}


def params(seq: int, payload: dict[str, object]) -> dict[str, object]:
    return {"session": "s", "turn": 1, "seq": seq, "event": payload}


def test_the_servers_events_render_for_a_person() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = TerminalRenderer(out, err, color=False)
    for seq, event in enumerate(EVENTS, 1):
        renderer.notification(read_event(params(seq, event.payload())))
    assert out.getvalue() == "Hello\n"
    lines = err.getvalue().splitlines()
    assert lines[0] == "✓ read_file a.py — x = 1 (+1 lines)"
    assert lines[1].startswith("— end turn · 2 step(s) · 5 in / 7 out tokens")


def test_json_lines_are_the_params_as_sent() -> None:
    out = io.StringIO()
    renderer = JsonRenderer(out, io.StringIO())
    sent = [params(seq, event.payload()) for seq, event in enumerate(EVENTS, 1)]
    for raw in sent:
        renderer.notification(read_event(raw))
    assert [json.loads(line) for line in out.getvalue().splitlines()] == sent


@pytest.mark.parametrize(
    ("payload", "named"),
    [
        ({"type": "text_delta", "txt": "renamed"}, "text"),
        ({"type": "text_delta", "text": "a", "extra": 1}, "extra"),
        ({"type": "brand_new_event"}, "event"),
    ],
)
def test_an_event_that_drifted_fails_naming_the_field(
    payload: dict[str, object], named: str
) -> None:
    with pytest.raises(ContractDrift, match=named):
        read_event(params(1, payload))


def test_results_are_read_by_the_commands_model() -> None:
    usage = {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}
    raw = {"session": "s", "turn": 1, "stopReason": "end_turn", "text": "", "steps": 1}
    result = read_result(TurnResult, {**raw, "usage": usage}, "rhema.turn")
    assert result.stop_reason == "end_turn"
    with pytest.raises(ContractDrift, match=r"rhema\.turn.*usage"):
        read_result(TurnResult, raw, "rhema.turn")
    with pytest.raises(ContractDrift, match="updatedAt"):
        read_result(list[SessionSummary], [{**SUMMARY, "updated": "x"}], "rhema.sessions")


def test_a_note_after_a_ctrl_c_starts_its_own_line() -> None:
    """The terminal echoes ``^C`` where the cursor is; a second one may
    flush the newline already written, so the next note breaks the line."""
    out, err = io.StringIO(), io.StringIO()
    renderer = TerminalRenderer(out, err, color=False)
    renderer.notification(read_event(params(1, TextDelta("word word ").payload())))
    renderer.interrupted()
    renderer.note("cancelling…")
    assert (out.getvalue(), err.getvalue()) == ("word word \n", "cancelling…\n")
    renderer.interrupted()
    renderer.note("— stopped")
    assert err.getvalue() == "cancelling…\n\n— stopped\n"
    renderer.note("after")
    assert err.getvalue().endswith("— stopped\nafter\n")
    notes = io.StringIO()
    plain = JsonRenderer(io.StringIO(), notes)
    plain.interrupted()
    plain.note("— stopped")
    assert notes.getvalue() == "\n— stopped\n"


def test_a_subagents_calls_render_indented_under_the_task() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = TerminalRenderer(out, err, color=False)
    child: list[Event] = [
        ToolCallStart("r1", "read_file"),
        ToolCallArgsDelta("r1", '{"path": "hello.py"}'),
        ToolResultEvent("r1", "read_file", "x", is_error=False),
        ToolCallStart("g1", "grep"),
        ToolCallArgsDelta("g1", "not json {"),
        ToolResultEvent("g1", "grep", "boom", is_error=True),
    ]
    events = [ChildEvent("t1", "s-task-1-1", event) for event in child]
    for seq, event in enumerate(events, 1):
        renderer.notification(read_event(params(seq, event.payload())))
    assert out.getvalue() == ""
    assert err.getvalue().splitlines() == ["  ↳ ✓ read_file hello.py", "  ↳ ✗ grep"]
