"""run_turn: the driver loop, its step limit, and cancellation that leaves a
consistent history."""

from __future__ import annotations

import anyio
import pytest

from rhema_lsp.engine import (
    Agent,
    Message,
    ModelOutput,
    Role,
    Session,
    StepLimitError,
    StopReason,
    ToolCall,
    ToolContext,
    ToolResult,
    run_turn,
)
from rhema_lsp.engine.tools import Progress

from .scripted import Recorder, Reply, ScriptedProvider, ScriptedResolver, call, echo


async def test_a_turn_loops_steps_until_the_model_stops_asking_for_tools() -> None:
    provider = ScriptedProvider(
        Reply(calls=[call("c1", "read", path="a")]),
        Reply(calls=[call("c2", "read", path="b")]),
        Reply(text="all done"),
    )
    agent = Agent(provider, resolver=ScriptedResolver({"read": echo}))
    session = Session()
    sink = Recorder()
    output = await run(agent, session, sink)
    assert output.stop_reason is StopReason.END_TURN
    assert output.message.text == "all done"
    assert sink.types().count("step_start") == 3
    assert [m.role for m in session.history] == [
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
    ]
    # each request saw everything before it
    assert [len(r.messages) for r in provider.requests] == [1, 3, 5]


async def test_max_tokens_ends_the_turn() -> None:
    agent = Agent(ScriptedProvider(Reply(text="cut", stop=StopReason.MAX_TOKENS)))
    output = await run(agent, Session(), Recorder())
    assert output.stop_reason is StopReason.MAX_TOKENS


async def test_the_step_limit_fails_with_the_seed_message() -> None:
    provider = ScriptedProvider(*[Reply(calls=[call(f"c{i}", "read")]) for i in range(3)])
    agent = Agent(provider, resolver=ScriptedResolver({"read": echo}))
    session = Session()
    with pytest.raises(StepLimitError) as raised:
        await run(agent, session, Recorder(), max_steps=3)
    assert str(raised.value) == (
        "stopped after 3 steps without finishing; send a follow-up to keep going, "
        "or raise the step limit"
    )
    assert raised.value.steps == 3
    assert session.history[-1].role is Role.TOOL  # the last round is complete


async def test_cancelling_mid_resolve_leaves_every_call_answered() -> None:
    started = anyio.Event()

    async def slow(c: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    resolver = ScriptedResolver({"read": echo, "run": slow})
    provider = ScriptedProvider(
        Reply(calls=[call("c1", "read"), call("c2", "run"), call("c3", "read")]),
        Reply(text="never"),
    )
    agent = Agent(provider, resolver=resolver)
    session = Session()
    sink = Recorder()
    async with anyio.create_task_group() as group:
        group.start_soon(run, agent, session, sink)
        await started.wait()
        group.cancel_scope.cancel()

    assert resolver.ran == ["c1", "c2"]  # c3 never started
    results = [m.tool_results[0] for m in session.history if m.role is Role.TOOL]
    assert [r.id for r in results] == ["c1", "c2", "c3"]
    assert results[0].is_error is False
    assert results[1].is_error and "cancelled by the user while it ran" in results[1].content
    assert results[2].is_error and "was not run" in results[2].content
    assert "step_end" not in sink.types()
    assert len(provider.requests) == 1


async def test_cancelling_mid_stream_appends_nothing() -> None:
    provider = ScriptedProvider(Reply(text="partial answer", hang=True))
    agent = Agent(provider)
    session = Session()
    sink = Recorder()
    with anyio.move_on_after(0.05):
        await run(agent, session, sink)
    assert [m.role for m in session.history] == [Role.USER]
    assert "text_delta" in sink.types()


async def test_the_cancel_signal_stops_further_tools_and_steps() -> None:
    async def cancelling(c: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
        ctx.cancel.set()
        return ToolResult.success(c.id, "stopped early")

    resolver = ScriptedResolver({"stop": cancelling, "read": echo})
    provider = ScriptedProvider(
        Reply(calls=[call("c1", "stop"), call("c2", "read")]), Reply(text="never")
    )
    agent = Agent(provider, resolver=resolver)
    session = Session()
    output = await run(agent, session, Recorder())
    assert output.stop_reason is StopReason.TOOL_USE
    assert resolver.ran == ["c1"]
    last = session.history[-1].tool_results[0]
    assert last.id == "c2" and "was not run" in last.content
    assert len(provider.requests) == 1


async def run(agent: Agent, session: Session, sink: Recorder, max_steps: int = 10) -> ModelOutput:
    return await run_turn(agent, session, Message.user("go"), sink, ToolContext(), max_steps)
