"""The run pipeline in process, door-free: what a turn commits and in which
order, resume, cancellation at each point (before the first model call,
mid-stream, during a tool), commit failures, the session's context budget
across turns, and checkpoints that rewind a turn's edit exactly."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.engine import (
    CompactionEvent,
    ErrorEvent,
    Message,
    Role,
    Session,
    TextDelta,
    ToolCall,
    ToolResultEvent,
    TurnEnd,
)
from rhema_lsp.runs import points
from rhema_lsp.runs.driver import INTERRUPTED
from rhema_lsp.runs.registry import Run
from rhema_lsp.runs.rewind import rewind
from rhema_lsp.runs.settings import Settings
from rhema_lsp.sessions import SessionBusyError, SessionStore, SessionStoreError
from rhema_lsp.tools import MemoryEditor
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply
from tests.unit.conftest import HELLO
from tests.unit.runs.harness import (
    Bench,
    Recorder,
    make_turns,
    no_two_user_messages_in_a_row,
    request_roles,
    roles,
)

EDIT = ("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": '"hi "'})


async def test_a_turn_commits_its_prompt_and_answer_and_checkpoints_its_edit(
    bench: Bench, folder: Path
) -> None:
    bench.fake.script(tool_reply(EDIT), text_reply("Greets with hi now."))

    report, out = await bench.turn("say hi instead")

    assert (report.outcome.stop_reason, report.outcome.error) == ("end_turn", None)
    assert report.ref.turn == 1
    assert '"hi "' in (folder / "hello.py").read_text()
    stored = await bench.store.load(report.ref.session)
    assert roles(stored) == ["user", "assistant", "tool", "assistant"]
    info = await bench.store.info(report.ref.session)
    assert (info.turns, info.model) == (1, "fake-model")
    [turn] = await bench.store.checkpoints.turns(report.ref.session)
    assert (turn.turn, turn.title) == (1, "say hi instead")
    assert [change.uri for change in turn.files] == [(folder / "hello.py").as_uri()]
    assert out.events[-1] == out.of(TurnEnd)[0]
    assert out.closed == [report.outcome]

    async with bench.store.lease(report.ref.session):
        undone = await rewind(bench.store, bench.editor, [folder], report.ref.session, 1, "code")
    assert undone.restored == [(folder / "hello.py").as_uri()]
    assert (folder / "hello.py").read_text() == HELLO


async def test_each_commit_point_is_named_in_order(bench: Bench) -> None:
    passed: list[str] = []
    bench.turns.on_point = passed.append
    bench.fake.script(tool_reply(EDIT), text_reply("done"))

    await bench.turn("say hi")

    assert passed == [
        points.TURN_RESERVED,
        points.LEASE_HELD,
        points.RESUMED,
        points.PROMPT_COMMITTED,
        points.INTENT_COMMITTED,
        points.CHANGE_PREPARED,
        points.CHANGE_APPLIED,
        points.CHANGE_RECORDED,
        points.STEP_COMMITTED,
        points.STEP_COMMITTED,
        points.TURN_CHECKPOINTED,
        points.TURN_RECORDED,
    ]
    assert set(passed) == set(points.POINTS) - {points.COMPACTION_COMMITTED}


async def test_a_second_turn_carries_the_first_and_counts_as_turn_two(bench: Bench) -> None:
    bench.fake.script(text_reply("one"), text_reply("two"))
    first, _ = await bench.turn("first")
    second, _ = await bench.turn("second", first.ref.session)

    assert (second.ref.session, second.ref.turn) == (first.ref.session, 2)
    assert request_roles(bench.fake.requests[1]) == ["user", "assistant", "user"]


async def _crashed_session(store: SessionStore, call: ToolCall) -> str:
    """A session whose last round a crash left open: a tool call, no result."""
    info = await store.create("crashed")
    session = Session(
        history=[
            Message.user("look"),
            Message(role=Role.ASSISTANT, content=[call]),
        ]
    )
    await store.commit(info.id, session)
    return info.id


async def test_the_next_turn_reruns_a_safe_call_a_crash_left_without_a_result(
    bench: Bench,
) -> None:
    call = ToolCall(id="c1", name="read_file", args={"path": "hello.py"})
    session = await _crashed_session(bench.store, call)
    bench.fake.script(text_reply("it greets"))

    report, out = await bench.turn("and now?", session)

    assert report.outcome.stop_reason == "end_turn"
    [rerun] = out.of(ToolResultEvent)
    assert (rerun.id, rerun.is_error) == ("c1", False)
    assert "hello" in rerun.content
    assert request_roles(bench.fake.requests[0]) == ["user", "assistant", "tool", "user"]


async def test_the_next_turn_reports_an_unsafe_call_a_crash_left_as_interrupted(
    bench: Bench, folder: Path
) -> None:
    call = ToolCall(id="c1", name="edit_file", args=EDIT[1])
    session = await _crashed_session(bench.store, call)
    bench.fake.script(text_reply("ok"))

    _, out = await bench.turn("go on", session)

    [interrupted] = out.of(ToolResultEvent)
    assert interrupted.is_error
    assert (folder / "hello.py").read_text() == HELLO  # never run twice


# -- cancellation ------------------------------------------------------------------


async def test_a_turn_cancelled_before_the_first_model_call_keeps_an_interrupted_answer(
    bench: Bench,
) -> None:
    run = await bench.begin("talk")
    run.cancel()

    report, out = await bench.turn("talk", run=run)

    assert report.outcome.stop_reason == "cancelled"
    stored = await bench.store.load(report.ref.session)
    assert roles(stored) == ["user", "assistant"]
    assert stored.history[-1].text == INTERRUPTED
    assert [end.stop_reason for end in out.of(TurnEnd)] == ["cancelled"]

    bench.fake.script(text_reply("back"))
    again, _ = await bench.turn("more", report.ref.session)
    assert again.outcome.stop_reason == "end_turn"
    assert request_roles(bench.fake.requests[-1]) == ["user", "assistant", "user"]


async def test_a_turn_cancelled_mid_stream_keeps_its_partial_answer_and_its_usage(
    bench: Bench,
) -> None:
    bench.fake.script(text_reply("word " * 400, chunk=5, delay=0.002))
    run = await bench.begin("talk")
    out = Recorder()

    def cancel_on_the_third_delta(event: object) -> None:
        if isinstance(event, TextDelta) and len(out.of(TextDelta)) == 3:
            run.cancel()

    out.hook = cancel_on_the_third_delta
    report, _ = await bench.turn("talk", run=run, output=out)

    outcome = report.outcome
    streamed = "".join(delta.text for delta in out.of(TextDelta))
    assert outcome.stop_reason == "cancelled"
    assert outcome.steps == 1
    assert outcome.text == streamed
    assert 0 < len(streamed) < len("word " * 400)
    assert outcome.usage.input > 0 and outcome.usage.output > 0
    assert out.of(TurnEnd)[0].usage == outcome.usage
    stored = await bench.store.load(report.ref.session)
    assert roles(stored) == ["user", "assistant"]
    assert stored.history[-1].text == f"{streamed}\n\n{INTERRUPTED}"

    bench.fake.script(text_reply("go on"))
    await bench.turn("continue", report.ref.session)
    sent = bench.fake.requests[-1]["messages"]
    assert request_roles(bench.fake.requests[-1]) == ["user", "assistant", "user"]
    assert sent[-2]["content"].endswith(INTERRUPTED)


class _HoldingEditor(MemoryEditor):
    """Asks nothing: a confirmation cancels the run and waits, as a user who
    presses stop while the question is open."""

    run: Run | None = None

    async def confirm(self, message: str, choices: Any) -> str | None:
        assert self.run is not None
        self.run.cancel()
        await asyncio.Event().wait()
        return None


async def test_a_turn_cancelled_during_a_tool_records_both_calls_and_runs_no_other(
    bench: Bench, folder: Path
) -> None:
    editor = _HoldingEditor([folder])
    bench.editor = editor
    bench.fake.script(
        tool_reply(
            ("run_command", {"command": "echo hi", "escalate": True}),
            ("write_file", {"path": "after.txt", "content": "never"}),
        ),
        text_reply("never asked"),
    )
    run = editor.run = await bench.begin("run it", mode="agent")

    report, out = await bench.turn("run it", run=run, mode="agent")

    assert report.outcome.stop_reason == "cancelled"
    results = out.of(ToolResultEvent)
    assert [(r.name, r.is_error) for r in results] == [
        ("run_command", True),
        ("write_file", True),
    ]
    assert "while it ran" in results[0].content
    assert "was not run" in results[1].content
    assert not (folder / "after.txt").exists()
    assert len(bench.fake.requests) == 1
    stored = await bench.store.load(report.ref.session)
    assert roles(stored) == ["user", "assistant", "tool", "tool"]
    assert no_two_user_messages_in_a_row(stored)


# -- commit failures -----------------------------------------------------------------


async def _failing_bench(
    tmp_path: Path, fake: FakeModelServer, fail_at: int
) -> tuple[Bench, SessionStore]:
    """A bench whose store fails its ``fail_at``-th commit (from 1), once."""
    folder = tmp_path / "failing"
    folder.mkdir()
    (folder / "hello.py").write_text(HELLO)
    commits = 0

    def on_event(name: str) -> None:
        nonlocal commits
        if name == "commit.begin":
            commits += 1
            if commits == fail_at:
                raise SessionStoreError("the disk is full")

    store = await SessionStore.open(folder, on_event=on_event)
    return Bench(folder, store, MemoryEditor([folder]), fake, make_turns(), Settings()), store


async def test_a_prompt_that_cannot_be_committed_ends_in_error_before_any_model_call(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    bench, store = await _failing_bench(tmp_path, fake, fail_at=1)
    try:
        session = (await store.create("an existing session")).id
        report, out = await bench.turn("hello", session)
        assert not await store.turn_numbers.started(session, report.ref.turn)
        assert (await store.info(session)).turns == 0  # its number given back
    finally:
        await store.close()

    assert report.outcome.stop_reason == "error"
    assert "the disk is full" in (report.outcome.error or "")
    assert [e.message for e in out.of(ErrorEvent)] == [report.outcome.error]
    assert out.of(TurnEnd)[0].stop_reason == "error"
    assert fake.requests == []


async def test_a_tool_use_that_cannot_be_committed_runs_no_tool(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    bench, store = await _failing_bench(tmp_path, fake, fail_at=2)
    fake.script(tool_reply(EDIT), text_reply("never"))
    try:
        session = (await store.create("an existing session")).id
        report, out = await bench.turn("say hi", session)
        stored = await store.load(report.ref.session)
    finally:
        await store.close()

    assert report.outcome.stop_reason == "error"
    assert "the disk is full" in (report.outcome.error or "")
    assert out.of(ToolResultEvent) == []
    assert (bench.folder / "hello.py").read_text() == HELLO
    assert len(fake.requests) == 1
    assert roles(stored) == ["user", "assistant"]  # the last checkpoint kept the answer


# -- the context budget -------------------------------------------------------------


async def test_the_sessions_budget_lives_across_turns_and_compacts_the_next_request(
    bench: Bench,
) -> None:
    # A tiny window, and a first call whose reported usage teaches the budget
    # that this model's tokens are small: only a budget kept from the first
    # turn knows that the second request no longer fits.
    bench.settings = Settings.model_validate({"contextWindow": 1000, "compactThreshold": 0.5})
    plain: dict[str, Any] = {"tools": False, "system": "Be brief."}
    bench.fake.script(
        text_reply("an answer " * 30, usage=(2000, 10)),
        text_reply("what was said"),
        text_reply("the second answer"),
    )
    first, _ = await bench.turn("a question " * 36, **plain)
    backend = await bench.backend()
    budget = bench.turns.budget(first.ref.session, backend, bench.settings)
    assert budget.estimator.calibrated

    second, out = await bench.turn("and then?", first.ref.session, **plain)

    assert bench.turns.budget(first.ref.session, backend, bench.settings) is budget
    assert second.outcome.stop_reason == "end_turn"
    assert len(out.of(CompactionEvent)) == 1
    stored = await bench.store.load(first.ref.session)
    assert len(stored.compactions) == 1
    assert "an answer an answer" not in str(bench.fake.requests[-1]["messages"])


async def test_a_continuation_of_an_empty_session_is_an_error_not_a_model_call(
    bench: Bench,
) -> None:
    report, _ = await bench.turn(None, single_step=True)

    assert report.outcome.stop_reason == "error"
    assert "nothing to continue" in (report.outcome.error or "")
    assert bench.fake.requests == []


async def test_a_session_leased_elsewhere_is_refused_before_anything_is_shown(
    bench: Bench, folder: Path
) -> None:
    run = await bench.begin("hello")
    other = await SessionStore.open(folder)
    try:
        async with other.lease(run.session):
            out = Recorder()
            with pytest.raises(SessionBusyError):
                await bench.turn("hello", run=run, output=out)
    finally:
        await other.close()
    assert out.opened == [] and out.events == []
