"""An MCP prompt's arguments from the words typed after its slash command:
``name=value`` words fill the arguments they name, the others the rest in
order, the last one taking what is left; hostile words name nothing. The
servers' early start, at ``session/new``, asks the user nothing (a
workspace ``.mcp.json`` not answered yet is the first prompt's question)
and decides nothing for it."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.acp.mcp_prompts import command_name, prompt_arguments
from rhema_lsp.mcp.listings import McpPrompt, PromptArgument
from rhema_lsp.runs.settings import Settings
from tests.acp.client import RecordingClient
from tests.fakes.model_server import FakeModelServer

REVIEW = McpPrompt(
    "review",
    "review",
    "",
    (PromptArgument("path", "", True), PromptArgument("focus", "", False)),
)


@pytest.mark.parametrize(
    ("words", "arguments"),
    [
        ("", {}),
        ("a.py", {"path": "a.py"}),
        ("a.py security and style", {"path": "a.py", "focus": "security and style"}),
        ("focus=speed a.py", {"path": "a.py", "focus": "speed"}),
        ("path=b.py focus=x", {"path": "b.py", "focus": "x"}),
        ("path=b.py path=c.py", {"path": "b.py", "focus": "path=c.py"}),  # named once
        ("other=1 a.py", {"path": "other=1", "focus": "a.py"}),  # names no argument
        ("=x  \t  y", {"path": "=x", "focus": "y"}),
    ],
)
def test_the_typed_words_fill_the_arguments(words: str, arguments: dict[str, str]) -> None:
    assert prompt_arguments(REVIEW, words) == arguments


def test_a_prompt_without_arguments_takes_none_and_its_name_is_the_servers() -> None:
    bare = McpPrompt("hello", "Hello", "", ())
    assert prompt_arguments(bare, "some words") == {}
    assert command_name("fake", "review") == "mcp__fake__review"


async def test_the_early_start_asks_nothing_and_leaves_the_question_to_the_first_prompt(
    project: Path, fake: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="rhema_lsp.acp.mcp_prompts")
    (project / ".mcp.json").write_text('{"mcpServers": {"local": {"command": "true"}}}')
    settings = Settings.model_validate(
        {"provider": "custom", "protocol": "openai", "baseUrl": fake.base_url, "model": "m"}
    )
    client = RecordingClient()
    agent = RhemaAcpAgent(settings)
    agent.on_connect(client)
    await agent.initialize(protocol_version=1)
    try:
        await agent.new_session(cwd=str(project))
        await asyncio.gather(*agent.mcp_prompts._tasks)
        assert "not started early: a question waits for the first prompt" in caplog.text
        assert client.asked == []  # no question outside a prompt
        assert agent.mcp_prompts.listed == []
        assert not agent.mcp._trust._answered  # nothing decided for the first prompt
    finally:
        await agent.shutdown()
