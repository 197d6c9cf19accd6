"""DeltaMerger: adjacent deltas of one type and id join, the usage tally
keeps its latest value, and any other event goes out after what is held."""

from __future__ import annotations

from rhema_lsp.engine import (
    ChildEvent,
    Event,
    StepStart,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolOutputDelta,
    Usage,
    UsageUpdate,
)
from rhema_lsp.runs.merge import DeltaMerger


def make() -> tuple[DeltaMerger, list[Event]]:
    out: list[Event] = []
    return DeltaMerger(out.append), out


def test_adjacent_deltas_join_and_other_events_go_out_after_them() -> None:
    merger, out = make()
    held = [
        merger.emit(ThinkingDelta("a")),
        merger.emit(ThinkingDelta("b")),
        merger.emit(UsageUpdate(Usage(input=1, output=2))),
        merger.emit(TextDelta("c")),
        merger.emit(TextDelta("d")),
    ]
    assert held == [True] * 5
    assert out == [ThinkingDelta("ab")]
    assert merger.emit(ToolCallStart("x", "read_file")) is False
    assert out == [
        ThinkingDelta("ab"),
        TextDelta("cd"),
        UsageUpdate(Usage(input=1, output=2)),
        ToolCallStart("x", "read_file"),
    ]
    assert not merger.pending


def test_the_tally_keeps_its_latest_value_and_follows_the_held_delta() -> None:
    merger, out = make()
    merger.emit(TextDelta("e"))
    merger.emit(UsageUpdate(Usage(input=1, output=4)))
    merger.emit(TextDelta("f"))
    merger.emit(UsageUpdate(Usage(input=1, output=5)))
    assert merger.pending
    merger.flush()
    assert out == [TextDelta("ef"), UsageUpdate(Usage(input=1, output=5))]
    merger.flush()
    assert len(out) == 2


def test_deltas_of_different_calls_stay_apart() -> None:
    merger, out = make()
    for event in (
        ToolCallArgsDelta("c1", '{"pa'),
        ToolCallArgsDelta("c1", 'th": 1}'),
        ToolCallArgsDelta("c2", "{}"),
        ToolOutputDelta("c1", "one\n"),
        ToolOutputDelta("c1", "two\n"),
        ToolOutputDelta("c2", "three\n"),
    ):
        merger.emit(event)
    merger.emit(StepStart(iteration=1))
    assert out == [
        ToolCallArgsDelta("c1", '{"path": 1}'),
        ToolCallArgsDelta("c2", "{}"),
        ToolOutputDelta("c1", "one\ntwo\n"),
        ToolOutputDelta("c2", "three\n"),
        StepStart(iteration=1),
    ]


def test_a_lone_delta_goes_out_as_it_came() -> None:
    merger, out = make()
    delta = TextDelta("only")
    merger.emit(delta)
    merger.flush()
    assert out[0] is delta


def test_a_subagents_adjacent_deltas_join_inside_their_wrapper() -> None:
    merger, out = make()

    def child(event: Event, call: str = "t1") -> ChildEvent:
        return ChildEvent(call, f"s-{call}", event)

    for event in (
        child(TextDelta("a")),
        child(TextDelta("b")),
        child(ThinkingDelta("c")),
        child(TextDelta("d"), call="t2"),
        child(TextDelta("e"), call="t2"),
        TextDelta("f"),
        child(ToolCallArgsDelta("x", '{"pa')),
        child(ToolCallArgsDelta("x", 'th": 1}')),
        child(ToolCallArgsDelta("y", "{}")),
    ):
        assert merger.emit(event) is True
    assert merger.emit(child(StepStart(1))) is False
    assert out == [
        child(TextDelta("ab")),
        child(ThinkingDelta("c")),
        child(TextDelta("de"), call="t2"),
        TextDelta("f"),
        child(ToolCallArgsDelta("x", '{"path": 1}')),
        child(ToolCallArgsDelta("y", "{}")),
        child(StepStart(1)),
    ]
