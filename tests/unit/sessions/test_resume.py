from pathlib import Path

from rhema_lsp.engine import (
    Message,
    ResumeReport,
    Role,
    Session,
    TextPart,
    ToolCall,
    ToolContext,
    ToolResult,
)
from rhema_lsp.sessions import SessionStore
from tests.unit.sessions.scripted import NullSink, SideEffectResolver, side_lines


def crashed_mid_round() -> Session:
    """A history whose last round was committed but whose calls never finished:
    the read got its result, the second read and the write did not."""
    return Session(
        history=[
            Message.user("go"),
            Message(
                role=Role.ASSISTANT,
                content=[
                    TextPart(text="working"),
                    ToolCall(id="r1", name="read", args={"key": "a"}),
                    ToolCall(id="w1", name="write", args={"key": "b"}),
                    ToolCall(id="r2", name="read", args={"key": "c"}),
                ],
            ),
            Message(role=Role.TOOL, content=[ToolResult.success("r1", "value of a")]),
        ]
    )


async def test_open_reruns_safe_calls_interrupts_unsafe_ones_and_commits(
    store: SessionStore, folder: Path, tmp_path: Path
) -> None:
    info = await store.create("go")
    await store.commit(info.id, crashed_mid_round())
    side = tmp_path / "side.log"
    reader = await SessionStore.open(folder)
    session, report = await reader.open_and_resume(
        info.id, SideEffectResolver(side), NullSink(), ToolContext()
    )
    assert report == ResumeReport(rerun=["r2"], interrupted=["w1"])
    assert side_lines(side) == ["read r2"]
    results = {r.id: r for m in session.history for r in m.tool_results}
    assert results["w1"].is_error
    assert "interrupted" in results["w1"].content
    assert results["r2"].content == "value of c"
    # committed before it was returned, and the lease is gone again
    assert (await store.load(info.id)).history == session.history
    assert not (await store.info(info.id)).running
    again, second = await reader.open_and_resume(info.id, None, NullSink(), ToolContext())
    assert second == ResumeReport()
    assert again.history == session.history
    await reader.close()


async def test_without_a_resolver_every_pending_call_is_interrupted(
    store: SessionStore,
) -> None:
    info = await store.create("go")
    await store.commit(info.id, crashed_mid_round())
    _, report = await store.open_and_resume(info.id, None, NullSink(), ToolContext())
    assert report == ResumeReport(rerun=[], interrupted=["w1", "r2"])


async def test_a_session_running_elsewhere_is_returned_as_is(
    store: SessionStore, folder: Path, tmp_path: Path
) -> None:
    info = await store.create("go")
    await store.commit(info.id, crashed_mid_round())
    side = tmp_path / "side.log"
    other = await SessionStore.open(folder)
    async with store.lease(info.id):
        session, report = await other.open_and_resume(
            info.id, SideEffectResolver(side), NullSink(), ToolContext()
        )
    assert report == ResumeReport()
    assert session.history == crashed_mid_round().history
    assert side_lines(side) == []
    assert (await store.load(info.id)).history == crashed_mid_round().history
    await other.close()


async def test_resume_inside_the_callers_own_lease(store: SessionStore, tmp_path: Path) -> None:
    info = await store.create("go")
    await store.commit(info.id, crashed_mid_round())
    async with store.lease(info.id):
        _, report = await store.open_and_resume(
            info.id, SideEffectResolver(tmp_path / "side.log"), NullSink(), ToolContext()
        )
        assert (await store.info(info.id)).running
    assert report.rerun == ["r2"]
