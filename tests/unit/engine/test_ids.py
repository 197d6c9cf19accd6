"""Tool-call ids unique within a session: the engine keeps a provider's id
while it is new, and gives a missing or repeated one a fresh ``rhema_N``,
in the events as they stream, in the history, and after a reload."""

from __future__ import annotations

from typing import TypeVar

from rhema_lsp.engine import (
    Agent,
    CallIds,
    Message,
    ModelOutput,
    Role,
    Session,
    StopReason,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolContext,
    ToolResult,
    ToolResultEvent,
    Usage,
    run_turn,
    session_ids,
)

from .scripted import Recorder, Reply, ScriptedProvider, ScriptedResolver, call, echo

E = TypeVar("E")


def of(sink: Recorder, kind: type[E]) -> list[E]:
    return [event for event in sink.events if isinstance(event, kind)]


def calls_and_results(session: Session) -> tuple[list[ToolCall], list[ToolResult]]:
    parts = [part for message in session.history for part in message.content]
    return (
        [part for part in parts if isinstance(part, ToolCall)],
        [part for part in parts if isinstance(part, ToolResult)],
    )


def assert_unique_and_paired(session: Session) -> list[str]:
    """Every call id is used once, and each call's result follows it under its id."""
    calls, results = calls_and_results(session)
    ids = [c.id for c in calls]
    assert len(set(ids)) == len(ids), ids
    assert [r.id for r in results] == ids
    return ids


async def test_a_repeated_provider_id_gets_a_fresh_one_everywhere() -> None:
    # An id-less OpenAI-compatible server numbers every answer's calls from call_1.
    provider = ScriptedProvider(
        Reply(calls=[call("call_1", "read", path="a")], announce=True),
        Reply(calls=[call("call_1", "edit", path="a")], announce=True),
        Reply(text="done"),
    )
    agent = Agent(provider, resolver=ScriptedResolver({"read": echo, "edit": echo}))
    session = Session()
    sink = Recorder()
    await run_turn(agent, session, Message.user("go"), sink, ToolContext(), 5)

    assert assert_unique_and_paired(session) == ["call_1", "rhema_2"]
    calls, _ = calls_and_results(session)
    assert (calls[0].provider_id, calls[1].provider_id) == (None, "call_1")
    # what streamed carried the session's id from the first event on
    assert [e.id for e in of(sink, ToolCallStart)] == ["call_1", "rhema_2"]
    assert [e.id for e in of(sink, ToolCallArgsDelta)] == ["call_1", "rhema_2"]
    assert [(e.id, e.name) for e in of(sink, ToolResultEvent)] == [
        ("call_1", "read"),
        ("rhema_2", "edit"),
    ]
    # the tool saw the session's id, and the next request carries it
    last = provider.requests[-1].messages
    assert [p.id for m in last for p in m.content if isinstance(p, ToolResult)] == [
        "call_1",
        "rhema_2",
    ]


async def test_missing_ids_and_ids_repeated_within_one_answer() -> None:
    provider = ScriptedProvider(
        Reply(calls=[call("", "read", path="a"), call("", "read", path="b")]),
        Reply(calls=[call("x", "read", path="c"), call("x", "read", path="d")], announce=True),
        Reply(text="done"),
    )
    agent = Agent(provider, resolver=ScriptedResolver({"read": echo}))
    session = Session()
    sink = Recorder()
    await run_turn(agent, session, Message.user("go"), sink, ToolContext(), 5)

    assert assert_unique_and_paired(session) == ["rhema_1", "rhema_2", "x", "rhema_4"]
    calls, results = calls_and_results(session)
    assert [c.provider_id for c in calls] == [None, None, None, "x"]
    # each result is its own call's: the arguments echoed back
    assert [r.content for r in results] == [f'{{"path": "{p}"}}' for p in "abcd"]
    # the unannounced calls were announced by the engine under their new ids
    assert [e.id for e in of(sink, ToolCallStart)] == ["rhema_1", "rhema_2", "x", "rhema_4"]


async def test_a_session_reloaded_elsewhere_continues_with_fresh_ids() -> None:
    first = ScriptedProvider(Reply(calls=[call("call_1", "read", path="a")]), Reply(text="ok"))
    session = Session()
    agent = Agent(first, resolver=ScriptedResolver({"read": echo}))
    await run_turn(agent, session, Message.user("one"), Recorder(), ToolContext(), 5)

    # another process: the session as the store gives it back, a new agent
    reloaded = Session.model_validate_json(session.model_dump_json())
    second = ScriptedProvider(
        Reply(calls=[call("rhema_3", "read", path="b"), call("call_1", "read", path="c")]),
        Reply(text="ok"),
    )
    again = Agent(second, resolver=ScriptedResolver({"read": echo}))
    await run_turn(again, reloaded, Message.user("two"), Recorder(), ToolContext(), 5)

    # the provider's own "rhema_3" is new, so it is kept; call_1 is taken, and
    # the engine's number for it (3, the session's third call) is skipped
    assert assert_unique_and_paired(reloaded) == ["call_1", "rhema_3", "rhema_4"]
    calls, _ = calls_and_results(reloaded)
    assert calls[1].provider_id is None and calls[2].provider_id == "call_1"


def test_an_engine_number_in_use_is_skipped() -> None:
    history = [
        Message(role=Role.ASSISTANT, content=[ToolCall(id="rhema_2", name="r")]),
        Message(role=Role.TOOL, content=[ToolResult.success("rhema_2", "x")]),
    ]
    assert session_ids(history) == ({"rhema_2"}, 1)
    ids = CallIds(history)
    output = ModelOutput(
        message=Message(role=Role.ASSISTANT, content=[ToolCall(id="rhema_2", name="r")]),
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(),
    )
    (renamed,) = ids.finish(output).message.tool_calls
    assert (renamed.id, renamed.provider_id) == ("rhema_3", "rhema_2")


def test_an_answer_whose_ids_are_new_is_returned_as_it_is() -> None:
    output = ModelOutput(
        message=Message(role=Role.ASSISTANT, content=[ToolCall(id="toolu_1", name="r")]),
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(),
    )
    assert CallIds([]).finish(output) is output


def test_old_payloads_without_provider_id_load() -> None:
    stored = '{"type": "tool_call", "id": "call_1", "name": "read", "args": {}}'
    assert ToolCall.model_validate_json(stored).provider_id is None
