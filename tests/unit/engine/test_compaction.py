"""Compaction in the engine: a long session never outgrows the window, and
what is kept, quoted and pinned is exactly what the invariants say."""

from __future__ import annotations

import math

import pytest

from rhema_lsp.engine import (
    SUMMARY_HEADER,
    Agent,
    AgentProviderError,
    CompactionEvent,
    ContextBudget,
    ContextFill,
    Message,
    ModelOutput,
    ModelRequest,
    ProviderError,
    Role,
    Session,
    StopReason,
    TextPart,
    TokenEstimator,
    ToolContext,
    Usage,
    request_bytes,
    run_turn,
)
from rhema_lsp.engine.compaction import SUMMARY_SYSTEM, round_starts
from rhema_lsp.engine.events import EventSink

from .scripted import Recorder, Reply, ScriptedProvider, ScriptedResolver, call, echo

BYTES_PER_TOKEN = 3


def tokens_of(request: ModelRequest) -> int:
    return math.ceil(request_bytes(request) / BYTES_PER_TOKEN)


class WindowedModel:
    """A model with a window: refuses longer requests as a wire would,
    summarises when asked to, and otherwise calls ``echo`` on every other
    user message before answering."""

    def __init__(
        self, window: int, *, summary: str | None = "the user asked for many things"
    ) -> None:
        self.window = window
        self.summary = summary
        self.requests: list[ModelRequest] = []
        self.too_long = 0

    async def complete(self, request: ModelRequest, sink: EventSink) -> ModelOutput:
        self.requests.append(request)
        tokens = tokens_of(request)
        if tokens > self.window:
            self.too_long += 1
            raise ProviderError(
                f"prompt is too long: {tokens} tokens > {self.window} maximum",
                status=400,
                context_overflow=True,
            )
        usage = Usage(input=tokens, output=20)
        if request.system == SUMMARY_SYSTEM:
            if self.summary is None:
                raise ProviderError("the summary call failed", status=500)
            return ModelOutput(
                message=Message.assistant(self.summary),
                stop_reason=StopReason.END_TURN,
                usage=usage,
            )
        last = request.messages[-1]
        number = sum(1 for m in request.messages if m.role is Role.USER)
        if last.role is Role.USER and number % 2 == 0:
            tool = call(f"c{len(self.requests)}", "echo", text="x" * 300)
            return ModelOutput(
                message=Message(role=Role.ASSISTANT, content=[tool]),
                stop_reason=StopReason.TOOL_USE,
                usage=usage,
            )
        answer = "an answer that takes some room in the context " * 6
        return ModelOutput(
            message=Message.assistant(answer), stop_reason=StopReason.END_TURN, usage=usage
        )


def calls_have_results(messages: list[Message]) -> bool:
    """Every call has its result after it, and every result its call before it."""
    open_calls: set[str] = set()
    for message in messages:
        if message.role is Role.ASSISTANT:
            if open_calls:
                return False
            open_calls = {c.id for c in message.tool_calls}
        elif message.role is Role.TOOL:
            for result in message.tool_results:
                if result.id not in open_calls:
                    return False
                open_calls.discard(result.id)
        elif open_calls:
            return False
    return True


async def test_a_long_session_compacts_before_the_window_and_keeps_the_invariants() -> None:
    model = WindowedModel(window=1600)
    agent = Agent(
        model,
        resolver=ScriptedResolver({"echo": echo}),
        system="You are terse.",
        context=ContextBudget(window=1600),
    )
    session = Session()
    sink = Recorder()
    for turn in range(60):
        prompt = f"request number {turn}: please do the thing " + "y" * 80
        output = await run_turn(agent, session, Message.user(prompt), sink, ToolContext(), 5)
        assert output.stop_reason is StopReason.END_TURN

    assert model.too_long == 0  # compacted before the window, never after
    compactions = [e for e in sink.events if isinstance(e, CompactionEvent)]
    assert len(compactions) >= 3
    assert len(session.compactions) == len(compactions)
    assert all(e.after < e.before and e.summary_tokens > 0 for e in compactions)
    turns = [r for r in model.requests if r.system != SUMMARY_SYSTEM]
    assert all(tokens_of(r) <= 1600 for r in turns)
    assert all(calls_have_results(r.messages) for r in turns)
    # the summary call offers no tools; every turn's request does
    summaries = [r for r in model.requests if r.system == SUMMARY_SYSTEM]
    assert len(summaries) == len(compactions)
    assert all(r.tools == [] for r in summaries) and all(r.tools for r in turns)
    # the history is whole: 60 prompts, each with its answer
    assert sum(1 for m in session.history if m.role is Role.USER) == 60
    view = session.view()
    assert view[0].text.startswith(SUMMARY_HEADER)
    assert "the user asked for many things" in view[0].text
    assert calls_have_results(view)
    # every turn's instruction reached the model verbatim
    for turn in range(60):
        prompt = f"request number {turn}: please do the thing"
        assert any(prompt in m.text for r in turns for m in r.messages if m.role is Role.USER)
    fills = [e for e in sink.events if isinstance(e, ContextFill)]
    assert fills and all(f.window == 1600 for f in fills)


async def test_the_user_messages_of_the_compacted_part_are_quoted() -> None:
    model = WindowedModel(window=100_000)
    agent = Agent(model, system="s", context=ContextBudget(window=100_000))
    session = Session()
    for turn in range(4):
        await run_turn(agent, session, Message.user(f"prompt {turn}"), Recorder(), ToolContext(), 3)
    record = await agent.compact(session, Recorder())
    assert record is not None
    for turn in range(record.upto):
        message = session.history[turn]
        if message.role is Role.USER and turn != record.pinned:
            assert f"--- user message {turn + 1} ---\n{message.text}" in record.summary
    # the last instruction, when the cut passed it, is kept verbatim instead
    if record.pinned is not None:
        assert session.view()[1] == session.history[record.pinned]


async def test_the_current_instruction_is_kept_verbatim_when_the_cut_passes_it() -> None:
    # One long turn: the instruction, then many tool rounds.
    replies = [Reply(calls=[call(f"c{i}", "echo", blob="z" * 400)]) for i in range(12)]
    replies.append(Reply(text="the summary"))  # what the compaction asks for
    replies.append(Reply(text="done"))
    provider = ScriptedProvider(*replies)
    agent = Agent(provider, resolver=ScriptedResolver({"echo": echo}), system="s")
    session = Session()
    await run_turn(
        agent,
        session,
        Message.user("THE INSTRUCTION"),
        Recorder(),
        ToolContext(),
        12,
        limit_is_error=False,
    )
    record = await agent.compact(session, Recorder())
    assert record is not None and record.pinned == 0 and record.upto > 1
    view = session.view()
    assert view[0].text.startswith(SUMMARY_HEADER)
    assert view[1] == Message.user("THE INSTRUCTION")
    assert view[2].role is Role.ASSISTANT
    assert calls_have_results(view[1:])
    summary_request = provider.requests[-1]
    assert summary_request.system == SUMMARY_SYSTEM
    assert "THE INSTRUCTION" not in summary_request.messages[0].text  # pinned, not summarised


async def test_when_no_summary_can_be_written_the_oldest_rounds_are_dropped_with_a_note() -> None:
    model = WindowedModel(window=100_000, summary=None)
    agent = Agent(model, system="s", context=ContextBudget(window=100_000))
    session = Session()
    for turn in range(4):
        await run_turn(agent, session, Message.user(f"prompt {turn}"), Recorder(), ToolContext(), 3)
    sink = Recorder()
    record = await agent.compact(session, sink)
    assert record is not None and record.dropped and record.summary_tokens == 0
    assert "were dropped to fit the model's context window" in record.summary
    assert "the summary call failed" in record.summary
    assert "--- user message 1 ---\nprompt 0" in record.summary
    assert [e.summary_tokens for e in sink.events if isinstance(e, CompactionEvent)] == [0]


async def test_a_too_long_answer_compacts_once_and_retries_once() -> None:
    history_replies = [Reply(text=f"answer {i} " + "w" * 600) for i in range(3)]
    too_long = ProviderError(
        "prompt is too long: 9000 tokens > 4000 maximum",
        status=400,
        context_overflow=True,
        context_window=4000,
    )
    provider = ScriptedProvider(
        *history_replies,
        Reply(error=too_long),
        Reply(text="a summary of it all"),
        Reply(text="the retried answer"),
    )
    agent = Agent(provider, system="s")
    session = Session()
    for turn in range(3):
        await run_turn(agent, session, Message.user(f"q{turn}"), Recorder(), ToolContext(), 2)
    sink = Recorder()
    output = await run_turn(agent, session, Message.user("q3"), sink, ToolContext(), 2)
    assert output.message.text == "the retried answer"
    assert len(provider.requests) == 3 + 3
    assert provider.requests[4].system == SUMMARY_SYSTEM
    retried = provider.requests[5]
    assert retried.messages[0].text.startswith(SUMMARY_HEADER)
    assert retried.messages[-1] == Message.user("q3")
    assert [e.type for e in sink.events].count("compaction") == 1
    assert agent.context.window == 4000  # learnt from the error


async def test_still_too_long_after_compacting_ends_with_what_to_do() -> None:
    too_long = ProviderError("prompt is too long", status=400, context_overflow=True)
    provider = ScriptedProvider(
        Reply(text="a1"), Reply(error=too_long), Reply(text="summary"), Reply(error=too_long)
    )
    agent = Agent(provider, system="s")
    session = Session()
    await run_turn(agent, session, Message.user("q0"), Recorder(), ToolContext(), 2)
    with pytest.raises(AgentProviderError, match="even after compacting the conversation"):
        await run_turn(agent, session, Message.user("q1"), Recorder(), ToolContext(), 2)


async def test_with_nothing_older_to_compact_a_too_long_request_fails_clearly() -> None:
    too_long = ProviderError("prompt is too long", status=400, context_overflow=True)
    provider = ScriptedProvider(Reply(error=too_long))
    agent = Agent(provider, system="s")
    with pytest.raises(AgentProviderError, match="start a new session"):
        await run_turn(agent, Session(), Message.user("huge"), Recorder(), ToolContext(), 2)
    assert len(provider.requests) == 1


def test_the_view_follows_the_latest_compaction_and_the_history_stays_whole() -> None:
    from rhema_lsp.engine import Compaction

    history = [Message.user("a"), Message.assistant("b"), Message.user("c"), Message.assistant("d")]
    session = Session(history=list(history))
    assert session.view() == history
    session.compactions.append(Compaction(upto=2, summary="S1"))
    assert [m.text for m in session.view()] == ["S1", "c", "d"]
    session.compactions.append(Compaction(upto=3, summary="S2", pinned=2))
    assert [m.text for m in session.view()] == ["S2", "c", "d"]
    assert session.history == history


def test_rounds_start_at_every_message_but_a_tool_result() -> None:
    tool = call("c1", "echo")
    history = [
        Message.user("u"),
        Message(role=Role.ASSISTANT, content=[tool]),
        Message(role=Role.TOOL, content=[]),
        Message(role=Role.ASSISTANT, content=[TextPart(text="t")]),
    ]
    assert round_starts(history) == [0, 1, 3]


def test_the_estimate_calibrates_on_reported_usage_within_bounds() -> None:
    estimator = TokenEstimator()
    assert estimator.tokens(3000) == 1000
    estimator.calibrate(4000, 1000)
    assert estimator.tokens(4000) == 1000 and estimator.calibrated
    estimator.calibrate(4000, 0)  # teaches nothing
    assert estimator.bytes_per_token == 4
    estimator.calibrate(100_000, 1)  # nonsense usage: clamped
    assert estimator.bytes_per_token == 8


async def test_a_compaction_is_committed_before_its_event_and_a_failed_commit_emits_none() -> None:
    seen: list[tuple[int, int]] = []  # (compactions in the session, events so far) per commit
    sink = Recorder()

    async def commit(session: Session) -> None:
        seen.append((len(session.compactions), len(sink.events)))

    agent = Agent(
        WindowedModel(window=1600),
        resolver=ScriptedResolver({"echo": echo}),
        compaction_hook=commit,
        context=ContextBudget(window=1600),
    )
    session = Session()
    for turn in range(30):
        prompt = f"request number {turn}: please do the thing " + "y" * 80
        await run_turn(agent, session, Message.user(prompt), sink, ToolContext(), 5)
    events = [i for i, e in enumerate(sink.events) if isinstance(e, CompactionEvent)]
    assert len(events) >= 2 and len(seen) == len(events)
    # The n-th commit holds n compactions and happens before the n-th event.
    assert [count for count, _ in seen] == list(range(1, len(events) + 1))
    assert all(before <= event for (_, before), event in zip(seen, events, strict=True))

    async def failing(session: Session) -> None:
        raise OSError("the disk is full")

    quiet = Recorder()
    agent.compaction_hook = failing
    with pytest.raises(OSError, match="the disk is full"):
        await agent.compact(session, quiet)
    assert not [e for e in quiet.events if isinstance(e, CompactionEvent)]
