"""An MCP prompt's arguments from the words typed after its slash command:
``name=value`` words fill the arguments they name, the others the rest in
order, the last one taking what is left; hostile words name nothing."""

from __future__ import annotations

import pytest

from rhema_lsp.acp.mcp_prompts import command_name, prompt_arguments
from rhema_lsp.mcp.listings import McpPrompt, PromptArgument

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
