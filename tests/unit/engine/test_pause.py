"""Agent.step continues a paused answer (``pause_turn``) within the step,
a bounded number of times."""

from __future__ import annotations

from rhema_lsp.engine import (
    PAUSE_CONTINUATIONS,
    Agent,
    EventSink,
    Message,
    ModelOutput,
    ModelRequest,
    ProviderPart,
    Role,
    Session,
    StepEnd,
    StopReason,
    TextDelta,
    TextPart,
    ToolContext,
    Usage,
    UsageUpdate,
)

from .scripted import Recorder

SEARCH = ProviderPart(wire="anthropic", kind="server_tool_use", provider_data={"id": "srv_1"})


class PausingProvider:
    """Pauses ``pauses`` times (each answer a search and a sentence), then ends."""

    def __init__(self, pauses: int) -> None:
        self.pauses = pauses
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, sink: EventSink) -> ModelOutput:
        self.requests.append(request)
        number = len(self.requests)
        sink.emit(TextDelta(f"part {number}."))
        usage = Usage(input=100 * number, output=10, cache_read=50)
        sink.emit(UsageUpdate(usage))
        paused = number <= self.pauses
        return ModelOutput(
            message=Message(
                role=Role.ASSISTANT, content=[SEARCH, TextPart(text=f"part {number}.")]
            ),
            stop_reason=StopReason.PAUSE_TURN if paused else StopReason.END_TURN,
            usage=usage,
        )


async def test_a_paused_answer_is_sent_back_until_it_ends() -> None:
    provider = PausingProvider(pauses=2)
    session = Session(history=[Message.user("search three things")])
    sink = Recorder()

    step = await Agent(provider).step(session, sink, ToolContext())

    assert sink.types().count("step_start") == 1
    assert sink.types().count("step_end") == 1
    # Each continuation resends the history with every paused answer in it.
    assert [len(request.messages) for request in provider.requests] == [1, 2, 3]
    assert provider.requests[2].messages[1].content[0] == SEARCH
    assert [m.role for m in session.history] == [Role.USER, *[Role.ASSISTANT] * 3]
    total = Usage(input=600, output=30, cache_read=150)
    assert step.output.stop_reason is StopReason.END_TURN
    assert step.output.usage == total
    assert sink.events[-1] == StepEnd(usage=total, stop_reason=StopReason.END_TURN)
    # The running tally counts the step's earlier calls too.
    tallies = [event.usage for event in sink.events if isinstance(event, UsageUpdate)]
    assert tallies == [
        Usage(input=100, output=10, cache_read=50),
        Usage(input=300, output=20, cache_read=100),
        total,
    ]


async def test_continuations_are_bounded_and_the_step_says_paused() -> None:
    provider = PausingProvider(pauses=100)
    session = Session(history=[Message.user("search forever")])
    sink = Recorder()

    step = await Agent(provider).step(session, sink, ToolContext())

    assert len(provider.requests) == 1 + PAUSE_CONTINUATIONS
    assert step.output.stop_reason is StopReason.PAUSE_TURN
    assert isinstance(sink.events[-1], StepEnd)
    assert sink.events[-1].stop_reason is StopReason.PAUSE_TURN
    assert sink.events[-1].payload()["stopReason"] == "pause_turn"
