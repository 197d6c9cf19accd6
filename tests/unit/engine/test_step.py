"""Agent.step: one exchange, the exact event order, commit-before-execute,
in-band tool failures."""

from __future__ import annotations

import json

import pytest

from rhema_lsp.engine import (
    Agent,
    AgentProviderError,
    ChatParams,
    CommitError,
    Message,
    MissingProviderError,
    ProviderError,
    Role,
    Session,
    StepEnd,
    StepStart,
    StopReason,
    ThinkingEffort,
    ToolCall,
    ToolCallStart,
    ToolContext,
    ToolOutputDelta,
    ToolResult,
    ToolResultEvent,
    Usage,
)
from rhema_lsp.engine.tools import Progress

from .scripted import Recorder, Reply, ScriptedProvider, ScriptedResolver, call, echo


async def test_text_only_step_emits_start_deltas_end_and_appends_the_answer() -> None:
    provider = ScriptedProvider(Reply(text="hello there", usage=Usage(input=7, output=2)))
    agent = Agent(provider, system="be brief", params=ChatParams(model="m"))
    session = Session()
    session.history.append(Message.user("hi"))
    sink = Recorder()

    step = await agent.step(session, sink, ToolContext())

    assert sink.types() == ["step_start", "text_delta", "text_delta", "context", "step_end"]
    assert sink.events[0] == StepStart(iteration=0)
    assert sink.events[-1] == StepEnd(
        usage=Usage(input=7, output=2), stop_reason=StopReason.END_TURN
    )
    assert step.output.stop_reason is StopReason.END_TURN
    assert [m.role for m in session.history] == [Role.USER, Role.ASSISTANT]
    assert session.history[-1].text == "hello there"
    request = provider.requests[0]
    assert request.system == "be brief"
    assert request.params.model == "m"
    assert request.tools == []
    assert len(request.messages) == 1


async def test_the_request_holds_a_copy_of_the_history_and_the_resolver_specs() -> None:
    provider = ScriptedProvider(Reply(text="ok"))
    resolver = ScriptedResolver({"read": echo, "write": echo})
    agent = Agent(provider, resolver=resolver)
    session = Session()
    await agent.step(session, Recorder(), ToolContext())
    request = provider.requests[0]
    assert [spec.name for spec in request.tools] == ["read", "write"]
    assert request.messages == []  # the assistant answer appended after did not leak in
    assert len(session.history) == 1


async def test_tool_use_step_resolves_each_call_in_order_and_appends_results() -> None:
    provider = ScriptedProvider(
        Reply(text="looking", calls=[call("c1", "read", path="a"), call("c2", "read", path="b")])
    )
    resolver = ScriptedResolver({"read": echo})
    agent = Agent(provider, resolver=resolver)
    session = Session()
    sink = Recorder()

    step = await agent.step(session, sink, ToolContext())

    assert step.output.stop_reason is StopReason.TOOL_USE
    assert sink.types() == [
        "step_start",
        "text_delta",
        "tool_call_start",
        "tool_result",
        "tool_call_start",
        "tool_result",
        "context",
        "step_end",
    ]
    assert resolver.ran == ["c1", "c2"]
    assert [m.role for m in session.history] == [Role.ASSISTANT, Role.TOOL, Role.TOOL]
    results = [m.tool_results[0] for m in session.history[1:]]
    assert [r.id for r in results] == ["c1", "c2"]
    assert json.loads(results[1].content) == {"path": "b"}
    first_result = sink.events[3]
    assert isinstance(first_result, ToolResultEvent)
    assert first_result.name == "read"
    assert first_result.is_error is False


async def test_calls_the_provider_announced_are_not_announced_again() -> None:
    provider = ScriptedProvider(
        Reply(calls=[call("c1", "read"), call("c2", "read")], announce=True)
    )
    agent = Agent(provider, resolver=ScriptedResolver({"read": echo}))
    sink = Recorder()
    await agent.step(Session(), sink, ToolContext())
    starts = [e for e in sink.events if isinstance(e, ToolCallStart)]
    assert [s.id for s in starts] == ["c1", "c2"]
    assert sink.types() == [
        "step_start",
        "tool_call_start",
        "tool_call_args_delta",
        "tool_call_start",
        "tool_call_args_delta",
        "tool_result",
        "tool_result",
        "context",
        "step_end",
    ]


async def test_a_failing_commit_hook_fails_the_step_before_any_tool_runs() -> None:
    resolver = ScriptedResolver({"write": echo})
    seen: list[int] = []

    async def failing_hook(session: Session) -> None:
        seen.append(len(session.history))
        raise OSError("disk full")

    agent = Agent(
        ScriptedProvider(Reply(calls=[call("c1", "write")])),
        resolver=resolver,
        commit_hook=failing_hook,
    )
    session = Session()
    sink = Recorder()
    with pytest.raises(CommitError) as raised:
        await agent.step(session, sink, ToolContext())

    assert str(raised.value) == "commit before tool execution failed: disk full"
    assert seen == [1]  # the hook saw the assistant message already appended
    assert resolver.ran == []
    assert [m.role for m in session.history] == [Role.ASSISTANT]
    assert "tool_call_start" not in sink.types()
    assert "step_end" not in sink.types()


async def test_the_commit_hook_runs_before_the_first_tool() -> None:
    order: list[str] = []

    async def hook(session: Session) -> None:
        order.append(f"commit:{len(session.history)}")

    async def write(c: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
        order.append(f"tool:{c.id}")
        return ToolResult.success(c.id, "ok")

    agent = Agent(
        ScriptedProvider(Reply(calls=[call("c1", "write"), call("c2", "write")])),
        resolver=ScriptedResolver({"write": write}),
        commit_hook=hook,
    )
    await agent.step(Session(), Recorder(), ToolContext())
    assert order == ["commit:1", "tool:c1", "tool:c2"]


async def test_no_commit_without_a_tool_use_stop() -> None:
    commits: list[int] = []

    async def hook(session: Session) -> None:
        commits.append(1)

    agent = Agent(ScriptedProvider(Reply(text="done")), commit_hook=hook)
    await agent.step(Session(), Recorder(), ToolContext())
    assert commits == []


async def test_unknown_tool_and_missing_resolver_are_in_band_errors() -> None:
    agent = Agent(
        ScriptedProvider(Reply(calls=[call("c1", "nope")])),
        resolver=ScriptedResolver({"read": echo}),
    )
    session = Session()
    await agent.step(session, Recorder(), ToolContext())
    result = session.history[-1].tool_results[0]
    assert result.is_error and "unknown tool `nope`" in result.content

    bare = Agent(ScriptedProvider(Reply(calls=[call("c1", "read"), call("c2", "read")])))
    session = Session()
    sink = Recorder()
    await bare.step(session, sink, ToolContext())
    results = [m.tool_results[0] for m in session.history[1:]]
    assert [(r.id, r.is_error, r.content) for r in results] == [
        ("c1", True, "no tool resolver is configured"),
        ("c2", True, "no tool resolver is configured"),
    ]
    assert sink.types().count("tool_result") == 2


async def test_invalid_json_arguments_never_reach_the_resolver() -> None:
    broken = ToolCall(id="c1", name="read", args={}, raw_args='{"path": "a.py"')
    resolver = ScriptedResolver({"read": echo})
    agent = Agent(ScriptedProvider(Reply(calls=[broken])), resolver=resolver)
    session = Session()
    await agent.step(session, Recorder(), ToolContext())
    result = session.history[-1].tool_results[0]
    assert resolver.ran == []
    assert result.is_error
    assert result.content == (
        'tool arguments were not valid JSON; re-issue the call. raw: {"path": "a.py"'
    )


async def test_empty_raw_arguments_are_not_an_error() -> None:
    empty = ToolCall(id="c1", name="read", args={}, raw_args="")
    resolver = ScriptedResolver({"read": echo})
    agent = Agent(ScriptedProvider(Reply(calls=[empty])), resolver=resolver)
    session = Session()
    await agent.step(session, Recorder(), ToolContext())
    assert resolver.ran == ["c1"]
    assert session.history[-1].tool_results[0].is_error is False


async def test_a_resolver_that_raises_still_ends_in_band() -> None:
    async def broken(c: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
        raise RuntimeError("boom")

    agent = Agent(
        ScriptedProvider(Reply(calls=[call("c1", "read")])),
        resolver=ScriptedResolver({"read": broken}),
    )
    session = Session()
    await agent.step(session, Recorder(), ToolContext())
    result = session.history[-1].tool_results[0]
    assert result.is_error
    assert result.content == "tool `read` failed unexpectedly: RuntimeError: boom"


async def test_progress_chunks_are_stamped_with_the_call_id() -> None:
    async def command(c: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
        progress("line 1\n")
        progress("line 2\n")
        return ToolResult.success(c.id, "line 1\nline 2\n", code=0)

    agent = Agent(
        ScriptedProvider(Reply(calls=[call("c7", "run")])),
        resolver=ScriptedResolver({"run": command}),
    )
    sink = Recorder()
    session = Session()
    await agent.step(session, sink, ToolContext())
    deltas = [e for e in sink.events if isinstance(e, ToolOutputDelta)]
    assert deltas == [
        ToolOutputDelta(id="c7", chunk="line 1\n"),
        ToolOutputDelta(id="c7", chunk="line 2\n"),
    ]
    # ephemeral: the output reaches the history only through the result
    assert session.history[-1].tool_results[0].code == 0
    final = sink.events[-3]
    assert isinstance(final, ToolResultEvent) and final.code == 0


async def test_results_are_capped_in_the_history_and_the_event() -> None:
    async def huge(c: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
        return ToolResult.success(c.id, "é" * 50_000)

    agent = Agent(
        ScriptedProvider(Reply(calls=[call("c1", "read")])),
        resolver=ScriptedResolver({"read": huge}),
    )
    sink = Recorder()
    session = Session()
    await agent.step(session, sink, ToolContext())
    content = session.history[-1].tool_results[0].content
    assert "truncated" in content
    assert len(content.encode()) < 24_000 + 200
    event = sink.events[-3]
    assert isinstance(event, ToolResultEvent) and event.content == content


async def test_a_provider_error_fails_the_step_and_appends_nothing() -> None:
    error = ProviderError("rate limited", transient=True, status=429, retry_after=2.0)
    agent = Agent(ScriptedProvider(Reply(error=error)))
    session = Session()
    with pytest.raises(AgentProviderError) as raised:
        await agent.step(session, Recorder(), ToolContext())
    assert str(raised.value) == "rate limited"
    assert raised.value.error is error
    assert raised.value.__cause__ is error
    assert session.history == []


async def test_the_step_counter_is_per_agent() -> None:
    agent = Agent(ScriptedProvider(Reply(text="a"), Reply(text="b")))
    sink = Recorder()
    await agent.step(Session(), sink, ToolContext())
    await agent.step(Session(), sink, ToolContext())
    assert [e.iteration for e in sink.events if isinstance(e, StepStart)] == [0, 1]
    assert agent.steps == 2
    other = Agent(ScriptedProvider(Reply(text="c")))
    fresh = Recorder()
    await other.step(Session(), fresh, ToolContext())
    assert fresh.events[0] == StepStart(iteration=0)


def test_an_agent_needs_a_provider() -> None:
    with pytest.raises(MissingProviderError, match="agent built without a model provider"):
        Agent(None)


def test_thinking_effort_parses_trimmed_and_case_insensitive() -> None:
    assert ThinkingEffort.parse(" High ") is ThinkingEffort.HIGH
    assert ThinkingEffort.parse("low") is ThinkingEffort.LOW
    assert ThinkingEffort.parse("DEFAULT") is ThinkingEffort.DEFAULT
    assert ThinkingEffort.parse("maximal") is None
    assert ChatParams().thinking is ThinkingEffort.DEFAULT
