"""The completion package's parts on their own: the stop rule, the FIM wires
against the fake model on 127.0.0.1 (Ollama's and Mistral's routes, a
server without FIM), the completer's debounce, and NES's minimal edits."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from rhema_lsp.completion.completer import Completer, protected
from rhema_lsp.completion.nes import Prompt, minimal_edits, rewritten_region
from rhema_lsp.completion.window import cut, offset_of, position_of, replaces_tail, split_at
from rhema_lsp.completion.wires import Endpoint, NoFim, fim, fim_wire
from tests.fakes.model_server import FakeModelServer, text_reply


def at(text: str) -> tuple[str, int, int]:
    """``text`` without its ``|``, and the line and character of the ``|``."""
    offset = text.index("|")
    line, character = position_of(text, offset)
    return text.replace("|", "", 1), line, character


@pytest.mark.parametrize(
    ("text", "middle", "shown"),
    [
        ("def f(x):\n    |\n", "y = x\n    return y\nprint(1)\n", "y = x\n    return y"),
        ("def f(x):|\n", "\n    return x\n\nz = 1", "\n    return x"),
        ("x = compute(|)\n", "a, b)\nmore", "a, b)"),
        ("x = 1|\nrest", "  # one\ntwo", "  # one"),
        ("call(|)\n", ")", ""),  # only what follows the cursor
        ("x = |\n", "   \n", ""),
    ],
)
def test_the_stop_rule(text: str, middle: str, shown: str) -> None:
    source, line, character = at(text)
    assert cut(middle, split_at(source, line, character)) == shown


def test_a_one_line_suggestion_ending_with_the_line_s_tail_replaces_it() -> None:
    source, line, character = at("x = compute(|)\n")
    cursor = split_at(source, line, character)
    assert replaces_tail("a, b)", cursor)
    assert not replaces_tail("a, b", cursor)


def test_utf16_positions_round_trip() -> None:
    text = "a😀b\nc"
    assert offset_of(text, 0, 3) == 2  # the emoji is two UTF-16 units
    assert position_of(text, 2) == (0, 3)
    assert offset_of(text, 99, 99) == len(text)


@pytest.mark.parametrize(
    ("uri", "is_protected"),
    [
        ("file:///p/.env", True),
        ("file:///p/.env.local", True),
        ("file:///p/keys/server.pem", True),
        ("file:///home/u/.ssh/id_ed25519", True),
        ("file:///p/.git/config", True),
        ("file:///p/src/env.py", False),
        ("untitled:Untitled-1", False),
    ],
)
def test_protected_documents(uri: str, is_protected: bool) -> None:
    assert protected(uri) is is_protected


def test_the_wire_is_chosen_from_where_the_model_is() -> None:
    assert fim_wire("ollama", "openai", "http://127.0.0.1:11434/v1") == "ollama"
    assert fim_wire("custom", "openai", "https://codestral.mistral.ai/v1") == "mistral"
    assert fim_wire("custom", "openai", "https://api.deepseek.com/v1") == "deepseek"
    assert fim_wire("llamacpp", "openai", "http://127.0.0.1:8080/v1") == "openai"
    assert fim_wire("anthropic", "anthropic", "https://api.anthropic.com") == "chat"


@pytest.mark.parametrize(
    ("wire", "path"),
    [
        ("ollama", "/api/generate"),
        ("mistral", "/v1/fim/completions"),
        ("openai", "/v1/completions"),
    ],
)
async def test_each_fim_route_carries_prefix_and_suffix(wire: str, path: str) -> None:
    with FakeModelServer() as fake:
        fake.script(text_reply("middle"))
        endpoint = Endpoint(wire, fake.base_url, "coder")  # type: ignore[arg-type]
        async with httpx.AsyncClient() as client:
            got = await fim(client, endpoint, "before", "after", max_tokens=8, stop=["\n"])
        assert got == "middle"
        [post] = fake.posts
        assert post.path == path
        assert (post.body["prompt"], post.body["suffix"]) == ("before", "after")


async def test_a_server_without_fim_says_so() -> None:
    with FakeModelServer(fim=False) as fake:
        async with httpx.AsyncClient() as client:
            with pytest.raises(NoFim):
                await fim(
                    client, Endpoint("openai", fake.base_url, "m"), "a", "b", max_tokens=8, stop=[]
                )


async def test_requests_replaced_within_the_debounce_never_reach_the_model() -> None:
    asked: list[str] = []

    async def model(prompt: str, suffix: str, multiline: bool) -> str:
        asked.append(prompt)
        return "done"

    completer = Completer(model, debounce=0.05)
    texts = [f"x = {'a' * n}" for n in range(1, 6)]
    answers = await asyncio.gather(
        *(completer.complete("file:///a.py", t, 0, len(t)) for t in texts)
    )
    assert asked == [texts[-1]]
    assert [a.text if a else None for a in answers] == [None] * 4 + ["done"]


def test_a_rewrite_becomes_the_minimal_edits() -> None:
    text = "def f(a, b):\n    pass\n\nf(1)\nf(2)\n"
    region = rewritten_region(
        "<|editable_region_start|>\ndef f(a, b):\n    pass\n\nf(1, 0)\nf(2, 0)\n"
        "<|editable_region_end|>"
    )
    assert region is not None
    edits = minimal_edits(text, Prompt("", 0, len(text) - 1), region)
    assert [(text[e.start : e.end], e.new, position_of(text, e.start)) for e in edits] == [
        ("", ", 0", (3, 3)),
        ("", ", 0", (4, 3)),
    ]
    assert rewritten_region("no markers here") is None
