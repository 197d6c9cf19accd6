"""A subagent as its parent's clients see it (a real store, the fake model
over HTTP): every event of the child reaches the parent's output wrapped and
stamped with the ``task`` call and the child's session, in order, its
``turn_end`` last; the child is registered under its session while it runs,
and cancelling it by its session ends only the child (the parent's call gets
a cancelled result and the parent goes on); an agent definition's ``model``
names the model of the child's requests; a hostile ``model`` value is sent
as a name, never as a provider switch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rhema_lsp.engine import ChildEvent, Event, TextDelta, ToolCallStart, ToolResultEvent, TurnEnd
from rhema_lsp.runs.child_runs import CANCELLED
from tests.fakes.model_server import text_reply, tool_reply
from tests.unit.runs.harness import Bench, Recorder


def inner(events: list[Event]) -> list[Event]:
    return [e.event for e in events if isinstance(e, ChildEvent)]


async def test_the_childs_events_reach_the_parent_nested_in_its_task_call(bench: Bench) -> None:
    bench.fake.script(
        tool_reply(("task", {"description": "look", "prompt": "CHILD: read it"})),
        tool_reply(("read_file", {"path": "hello.py"})),
        text_reply("Found it.", chunk=3),
        text_reply("Done."),
    )
    report, out = await bench.turn("parent")

    [task] = out.of(ToolCallStart)
    wrapped = out.of(ChildEvent)
    child = f"{report.ref.session}-task-1-1"
    assert wrapped and {(e.id, e.session) for e in wrapped} == {(task.id, child)}
    events = inner(out.events)
    assert [e.name for e in events if isinstance(e, ToolCallStart)] == ["read_file"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Found it."
    assert isinstance(events[-1], TurnEnd) and events[-1].stop_reason == "end_turn"
    # every child event comes before the task's own result, none after
    result_at = next(
        i for i, e in enumerate(out.events) if isinstance(e, ToolResultEvent) and e.id == task.id
    )
    assert max(i for i, e in enumerate(out.events) if isinstance(e, ChildEvent)) < result_at
    assert wrapped[0].payload()["event"]["type"] == "step_start"
    assert not bench.door.runs.is_running(child)


async def test_cancelling_the_child_by_its_session_ends_only_the_child(bench: Bench) -> None:
    bench.fake.script(
        tool_reply(("task", {"description": "slow", "prompt": "CHILD-SLOW"})),
        text_reply("PARTIAL and then much more", chunk=8, hold=2),
        text_reply("The parent carried on."),
    )
    run = await bench.begin("go")
    child = f"{run.session}-task-{run.turn}-1"
    cancelled: list[list[str]] = []

    def on_event(event: Event) -> None:
        if isinstance(event, ChildEvent) and isinstance(event.event, TextDelta) and not cancelled:
            cancelled.append(bench.door.runs.cancel(child))

    try:
        report, out = await bench.turn("go", run=run, output=Recorder(hook=on_event))
    finally:
        bench.fake.release()
    assert cancelled == [[child]]
    assert report.outcome.stop_reason == "end_turn" and report.outcome.text.endswith("on.")
    [result] = [e for e in out.of(ToolResultEvent) if e.name == "task"]
    assert result.is_error and result.content.startswith(CANCELLED)
    assert "PARTIAL" in result.content
    assert isinstance(inner(out.events)[-1], TurnEnd)
    assert inner(out.events)[-1].stop_reason == "cancelled"  # type: ignore[union-attr]
    tool = [m for m in bench.fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool[-1]["content"].startswith(CANCELLED)
    assert not bench.door.runs.is_running(child)


def agent(folder: Path, name: str, model: str) -> None:
    agents = folder / ".rhema" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: d\nmodel: {model}\n---\nBe quick.\n"
    )


def models(bench: Bench) -> list[Any]:
    return [request["model"] for request in bench.fake.requests]


async def test_an_agents_model_names_the_model_of_the_childs_requests(
    bench: Bench, folder: Path
) -> None:
    agent(folder, "quick", "tiny-model")
    agent(folder, "same", "inherit")
    bench.fake.script(
        tool_reply(("task", {"description": "q", "prompt": "CHILD-Q", "agent": "quick"})),
        text_reply("quick answer"),
        tool_reply(("task", {"description": "s", "prompt": "CHILD-S", "agent": "same"})),
        text_reply("same answer"),
        text_reply("done"),
    )
    report, _ = await bench.turn("parent")
    assert report.outcome.error is None
    assert models(bench) == ["fake-model", "tiny-model", "fake-model", "fake-model", "fake-model"]
    stored = {s.id: s for s in await bench.store.list()}
    assert stored[f"{report.ref.session}-task-1-1"].model == "tiny-model"


async def test_a_hostile_model_value_is_only_a_name_on_the_parents_provider(
    bench: Bench, folder: Path
) -> None:
    agent(folder, "odd", '"http://evil.example/v1 ; rm -rf /"')
    bench.fake.script(
        tool_reply(("task", {"description": "o", "prompt": "CHILD-O", "agent": "odd"})),
        text_reply("odd answer"),
        text_reply("done"),
    )
    report, _ = await bench.turn("parent")
    assert report.outcome.error is None
    assert models(bench)[1] == "http://evil.example/v1 ; rm -rf /"
    assert len(bench.fake.requests) == 3  # every request reached this server


async def test_a_later_turns_children_get_sessions_of_their_own(bench: Bench) -> None:
    bench.fake.script(
        tool_reply(("task", {"description": "a", "prompt": "CHILD-A"})),
        text_reply("a"),
        text_reply("done a"),
        tool_reply(("task", {"description": "b", "prompt": "CHILD-B"})),
        text_reply("b"),
        text_reply("done b"),
    )
    first, _ = await bench.turn("first")
    _, out = await bench.turn("second", first.ref.session)
    [result] = [e for e in out.of(ToolResultEvent) if e.name == "task"]
    assert not result.is_error and result.content == "b"
    session = first.ref.session
    ids = {s.id for s in await bench.store.list()}
    assert ids == {session, f"{session}-task-1-1", f"{session}-task-2-1"}
