"""Resume: pending safe calls re-run, unsafe ones reported interrupted."""

from __future__ import annotations

from rhema_lsp.engine import (
    Message,
    Role,
    Session,
    ToolCall,
    ToolContext,
    ToolResult,
    pending_calls,
    resume,
)

from .scripted import Recorder, ScriptedResolver, call, echo


def crashed_history() -> Session:
    """A round whose first call finished and whose other two never did."""
    return Session(
        history=[
            Message.user("tidy up"),
            Message(
                role=Role.ASSISTANT,
                content=[
                    call("c1", "read", path="a"),
                    call("c2", "read", path="b"),
                    call("c3", "delete", path="c"),
                ],
            ),
            Message(role=Role.TOOL, content=[ToolResult.success("c1", "contents of a")]),
        ]
    )


async def test_resume_reruns_safe_calls_and_reports_unsafe_ones() -> None:
    resolver = ScriptedResolver({"read": echo, "delete": echo}, safe={"read"})
    session = crashed_history()
    sink = Recorder()

    report = await resume(session, resolver, sink, ToolContext())

    assert report.rerun == ["c2"]
    assert report.interrupted == ["c3"]
    assert report.changed
    assert resolver.ran == ["c2"]  # the unsafe delete was never run again
    results = [m.tool_results[0] for m in session.history if m.role is Role.TOOL]
    assert [r.id for r in results] == ["c1", "c2", "c3"]
    assert results[1].is_error is False and '"path": "b"' in results[1].content
    assert results[2].is_error
    assert results[2].content == (
        "`delete` was interrupted before its result was recorded: it may or may not have "
        "taken effect. Verify the current state before retrying it."
    )
    assert sink.types() == ["tool_call_start", "tool_result", "tool_result"]
    assert pending_calls(session) == []


async def test_a_complete_history_resumes_to_nothing() -> None:
    session = crashed_history()
    resolver = ScriptedResolver({"read": echo, "delete": echo}, safe={"read"})
    await resume(session, resolver, Recorder(), ToolContext())
    before = list(session.history)
    again = await resume(session, resolver, Recorder(), ToolContext())
    assert not again.changed
    assert session.history == before


async def test_without_a_resolver_every_pending_call_is_interrupted() -> None:
    session = crashed_history()
    report = await resume(session, None, Recorder(), ToolContext())
    assert report.rerun == []
    assert report.interrupted == ["c2", "c3"]


def test_pending_calls_stop_at_a_newer_user_message() -> None:
    session = crashed_history()
    session.history.append(Message.user("never mind"))
    assert pending_calls(session) == []
    assert pending_calls(Session()) == []
    session.history.append(Message.assistant("ok"))
    assert pending_calls(session) == []


def test_pending_calls_lists_unanswered_calls_in_order() -> None:
    assert [c.id for c in pending_calls(crashed_history())] == ["c2", "c3"]
    assert isinstance(pending_calls(crashed_history())[0], ToolCall)
