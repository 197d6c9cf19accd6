"""The context window on real wires: each wire's "too long" error is
recognised and recovered from once, Anthropic requests carry their cache
breakpoints, every wire's requests keep a byte-identical prefix, and the
window is known from presets and local servers."""

from __future__ import annotations

import itertools
import json

import pytest

from rhema_lsp.engine import (
    SUMMARY_HEADER,
    Agent,
    CompactionEvent,
    Message,
    Session,
    ToolContext,
    run_turn,
)
from rhema_lsp.providers import ProviderSettings, resolve_provider
from rhema_lsp.providers.errors import context_overflow
from rhema_lsp.providers.windows import known_window, probe_window
from tests.fakes.model_server import FakeModelServer, text_reply, too_long_reply, tool_reply
from tests.unit.engine.scripted import ScriptedResolver, echo
from tests.unit.providers.helpers import Recorder, adapter

SYSTEM = "You are a coding agent. " * 10


async def test_prompt_too_long_once_means_one_compaction_and_one_retry(
    any_wire: FakeModelServer,
) -> None:
    agent = Agent(adapter(any_wire), system=SYSTEM)
    session = Session()
    any_wire.script(*(text_reply(f"answer {n} " + "w" * 300) for n in range(3)))
    for n in range(3):
        await run_turn(agent, session, Message.user(f"question {n}"), Recorder(), ToolContext(), 2)
    any_wire.script(
        too_long_reply(any_wire.wire, 215_000, 200_000),
        text_reply("The user asked three questions; each was answered."),
        text_reply("the answer after compacting"),
    )
    sink = Recorder()
    output = await run_turn(agent, session, Message.user("question 3"), sink, ToolContext(), 2)

    assert output.message.text == "the answer after compacting"
    assert len(sink.of(CompactionEvent)) == 1
    assert len(any_wire.requests) == 3 + 3
    refused, summary, retried = (post.raw.decode() for post in any_wire.posts[3:])
    assert "question 3" in refused and SUMMARY_HEADER not in refused
    assert "Summarise the session above" in summary and "question 3" not in summary
    assert SUMMARY_HEADER in retried and "question 3" in retried
    assert agent.context.window == 200_000  # what the error named
    assert session.compactions[0].summary_tokens > 0


@pytest.mark.parametrize(
    ("status", "text", "window"),
    [
        (400, "prompt is too long: 215000 tokens > 200000 maximum", 200_000),
        (
            400,
            '{"error": {"message": "This model\'s maximum context length is 128000 tokens.", '
            '"code": "context_length_exceeded"}}',
            128_000,
        ),
        (
            400,
            "The input token count (1100000) exceeds the maximum number of tokens allowed "
            "(1048576).",
            1_048_576,
        ),
        (
            400,
            '{"error": {"code": 400, "message": "the request exceeds the available context '
            'size, try increasing it", "type": "exceed_context_size_error", '
            '"n_prompt_tokens": 5000, "n_ctx": 4096}}',
            4096,
        ),
        (
            400,
            "Trying to keep the first 9000 tokens when context the overflows. However, the "
            "model is loaded with context length of only 4096 tokens, which is not enough.",
            4096,
        ),
        (400, '{"error": "the input length exceeds the context length"}', None),
        (None, "Requested tokens (3000) exceed context window of 2048", 2048),
    ],
)
def test_each_wires_too_long_error_is_recognised(
    status: int | None, text: str, window: int | None
) -> None:
    assert context_overflow(status, text) == (True, window)


@pytest.mark.parametrize(
    ("status", "text"),
    [
        (400, "tools.0.input_schema: invalid"),
        (429, "prompt is too long"),  # a rate limit, whatever it says
        (None, "Requested tokens (600) exceed batch size of 512"),
    ],
)
def test_other_errors_are_not_taken_for_a_full_window(status: int | None, text: str) -> None:
    assert context_overflow(status, text) == (False, None)


def marks(body: dict[str, object]) -> list[str]:
    """Where the body's cache breakpoints are."""
    found = []
    tools = body.get("tools") or []
    assert isinstance(tools, list)
    found += [f"tool {t['name']}" for t in tools if "cache_control" in t]
    system = body.get("system") or []
    assert isinstance(system, list)
    found += ["system" for block in system if "cache_control" in block]
    messages = body["messages"]
    assert isinstance(messages, list)
    for index, message in enumerate(messages):
        for block in message["content"]:
            if "cache_control" in block:
                found.append(f"message {index - len(messages)} {block['type']}")
    return found


def a_turn_of_tool_rounds(server: FakeModelServer, rounds: int) -> None:
    server.script(
        *(tool_reply(("echo", {"round": n, "out": "o" * 200 * n})) for n in range(rounds)),
        text_reply("done"),
    )


async def test_anthropic_requests_carry_four_breakpoints_on_the_prefix_that_grows(
    anthropic_server: FakeModelServer,
) -> None:
    agent = Agent(
        adapter(anthropic_server), resolver=ScriptedResolver({"echo": echo}), system=SYSTEM
    )
    a_turn_of_tool_rounds(anthropic_server, 3)
    await run_turn(agent, Session(), Message.user("go"), Recorder(), ToolContext(), 10)
    bodies = anthropic_server.requests
    assert marks(bodies[0]) == ["tool echo", "system", "message -1 text"]
    for body in bodies[1:]:
        assert marks(body) == [
            "tool echo",
            "system",
            "message -3 " + ("text" if body is bodies[1] else "tool_result"),
            "message -1 tool_result",
        ]
    assert all(
        block["cache_control"] == {"type": "ephemeral"}
        for body in bodies
        for block in body["system"]
    )


async def test_consecutive_requests_share_a_byte_identical_prefix(
    any_wire: FakeModelServer,
) -> None:
    agent = Agent(adapter(any_wire), resolver=ScriptedResolver({"echo": echo}), system=SYSTEM)
    session = Session()
    a_turn_of_tool_rounds(any_wire, 4)
    await run_turn(agent, session, Message.user("first turn"), Recorder(), ToolContext(), 10)
    a_turn_of_tool_rounds(any_wire, 2)
    await run_turn(agent, session, Message.user("second turn"), Recorder(), ToolContext(), 10)

    raws = [post.raw for post in any_wire.posts]
    assert len(raws) == 5 + 3
    for earlier, later in itertools.pairwise(raws):
        if any_wire.wire == "anthropic":
            # Up to the breakpoint that moves on (the user message before the newest).
            moved = earlier.rindex(b'"cache_control"', 0, earlier.rindex(b'"cache_control"'))
            shared = earlier[: moved - len(b", ")]  # the key's separator goes with it
            kept = len(json.loads(earlier)["messages"]) - 2
        else:
            shared = earlier[: -len(b"]}")]  # all of it but the closing of the history
            kept = len(json.loads(earlier)["messages" if any_wire.wire == "openai" else "contents"])
        assert later.startswith(shared)
        assert shared.count(b'"role"') >= kept


def test_known_models_have_their_windows() -> None:
    assert known_window("claude-sonnet-4-5") == 200_000
    assert known_window("anthropic/claude-opus-4") == 200_000
    assert known_window("gpt-4.1-mini") == 1_047_576
    assert known_window("gemini-2.5-flash") == 1_048_576
    assert known_window("SmolLM2-135M-Instruct") == 2048
    assert known_window("some-local-model") is None


async def test_a_local_server_reports_its_window_and_resolution_keeps_it() -> None:
    with FakeModelServer(wire="openai", context_window=8192, report_window=True) as server:
        assert await probe_window(server.base_url, "fake-model") == 8192
        resolved = await resolve_provider(
            ProviderSettings(
                provider="custom", protocol="openai", base_url=server.base_url, model="fake-model"
            ),
            env={},
        )
        assert resolved.context_window == 8192
        assert server.requests == []  # only GETs: nothing a model would answer
    with FakeModelServer(wire="openai") as silent:
        assert await probe_window(silent.base_url, "fake-model") is None


async def test_a_hosted_preset_knows_its_window_without_asking() -> None:
    resolved = await resolve_provider(
        ProviderSettings(provider="anthropic"), env={"ANTHROPIC_API_KEY": "k"}, detect_local=False
    )
    assert resolved.context_window == 200_000
