"""Inline completion and next-edit suggestions through the real server (in
process, on a loopback client) against the fake model on 127.0.0.1: what the
model is sent, what the editor gets, and what never reaches the model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.server import create_server
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.server.loopback import Loopback, kept_logging, settings, start, stop

SOURCE = "def add(a, b):\n    \n\nprint(add(1, 2))\n"


@pytest.fixture
async def inline(folder: Path, fake: FakeModelServer) -> AsyncIterator[Loopback]:
    with kept_logging():
        client = await start(folder, {**settings(fake), "completionDebounce": 50})
        try:
            yield client
        finally:
            await stop(client)


def opened(client: Loopback, path: Path, text: str) -> str:
    uri = path.as_uri()
    document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
    client.notify("textDocument/didOpen", {"textDocument": document})
    return uri


def typed(client: Loopback, uri: str, version: int, line: int, character: int, text: str) -> None:
    where = {"line": line, "character": character}
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": where, "end": where}, "text": text}],
        },
    )


def ask(client: Loopback, uri: str, line: int, character: int, msg_id: str | None = None) -> Any:
    return client.send(
        "textDocument/inlineCompletion",
        {
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": character},
            "context": {"triggerKind": 2},
        },
        msg_id,
    )


def fim_posts(fake: FakeModelServer) -> list[Any]:
    return [post for post in fake.posts if post.path.endswith("/completions")]


NEOVIM_012 = {"textDocument": {"inlineCompletion": {"dynamicRegistration": True}}}
"""What Neovim 0.12's ``vim.lsp.inline_completion`` declares (no registry ships 0.12 yet)."""


@pytest.mark.parametrize("capabilities", [{}, NEOVIM_012], ids=["none declared", "neovim 0.12"])
async def test_inline_completion_is_declared_whatever_the_client_declared(
    folder: Path, fake: FakeModelServer, capabilities: dict[str, Any]
) -> None:
    with kept_logging():
        client = Loopback(create_server())
        init: dict[str, Any] = {
            "processId": None,
            "rootUri": folder.as_uri(),
            "capabilities": capabilities,
            "initializationOptions": {**settings(fake), "completionDebounce": 50},
        }
        answer = await client.send("initialize", init)
        assert answer["capabilities"]["inlineCompletionProvider"] == {}
        client.notify("initialized", {})
        uri = opened(client, folder / "n.py", "x = ")
        fake.script(text_reply("1"))
        assert (await ask(client, uri, 0, 4))["items"][0]["insertText"] == "1"
        await client.send("shutdown")


async def test_fim_carries_the_unsaved_buffer_around_the_cursor_and_typing_through_asks_nothing(
    inline: Loopback, fake: FakeModelServer, folder: Path
) -> None:
    uri = opened(inline, folder / "calc.py", SOURCE)
    typed(inline, uri, 2, 1, 4, "res")  # unsaved: "    res|"
    fake.script(text_reply("ult = a + b"))
    answer = await ask(inline, uri, 1, 7)
    assert answer["items"][0]["insertText"] == "ult = a + b"
    [post] = fim_posts(fake)
    assert post.path == "/v1/completions"
    assert post.body["prompt"].endswith("def add(a, b):\n    res")
    assert post.body["suffix"] == "\n\nprint(add(1, 2))\n"
    assert post.body["model"] == "fake-model"

    typed(inline, uri, 3, 1, 7, "ult")
    answer = await ask(inline, uri, 1, 10)
    assert answer["items"][0]["insertText"] == " = a + b"
    assert len(fake.posts) == 1  # answered from the shown suggestion


async def test_a_burst_cancelled_request_by_request_reaches_the_model_at_most_twice(
    inline: Loopback, fake: FakeModelServer, folder: Path
) -> None:
    uri = opened(inline, folder / "burst.py", SOURCE)
    fake.script(*(text_reply(f"x{n}") for n in range(5)))
    pending: list[asyncio.Future[Any]] = []
    for n in range(5):
        if pending:
            inline.notify("$/cancelRequest", {"id": f"burst-{n - 1}"})
        typed(inline, uri, 2 + n, 1, 4 + n, "y")
        pending.append(ask(inline, uri, 1, 5 + n, f"burst-{n}"))
    last = await pending[-1]
    assert last["items"][0]["insertText"].startswith("x")
    for earlier in pending[:-1]:
        with pytest.raises(RuntimeError):
            await earlier
    assert len(fake.posts) <= 2


async def test_a_request_cancelled_in_flight_is_aborted(
    inline: Loopback, fake: FakeModelServer, folder: Path
) -> None:
    uri = opened(inline, folder / "slow.py", SOURCE)
    fake.script(text_reply("late", delay=1.0))
    request = ask(inline, uri, 1, 4, "slow-1")
    await asyncio.to_thread(fake.received_post.wait, 5)
    inline.notify("$/cancelRequest", {"id": "slow-1"})
    async with asyncio.timeout(0.5):  # not the model's second
        with pytest.raises(RuntimeError, match="cancel"):
            await request
    assert await asyncio.to_thread(fake.client_closed.wait, 5)  # the connection was closed


async def test_a_protected_file_never_reaches_the_model(
    inline: Loopback, fake: FakeModelServer, folder: Path
) -> None:
    uri = opened(inline, folder / ".env", "OPENAI_API_KEY=sk-secret\nTOKEN=")
    typed(inline, uri, 2, 1, 6, "a")
    answer = await ask(inline, uri, 1, 7)
    assert answer == {"items": []}
    edit = await inline.send(
        "textDocument/copilotInlineEdit",
        {"textDocument": {"uri": uri, "version": 2}, "position": {"line": 1, "character": 7}},
    )
    assert edit == {"edits": []}
    assert fake.posts == []


async def test_a_server_without_fim_is_asked_through_a_chat_prompt(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeModelServer(wire="openai", fim=False) as fake, kept_logging():
        client = await start(folder, {**settings(fake), "completionDebounce": 50})
        try:
            uri = opened(client, folder / "chat.py", SOURCE)
            fake.script(text_reply("```python\nreturn a + b\n```"))
            answer = await ask(client, uri, 1, 4)
            assert answer["items"][0]["insertText"] == "return a + b"
            assert [post.path for post in fake.posts] == [
                "/v1/completions",
                "/v1/chat/completions",
            ]
            chat = fake.posts[1].body["messages"][-1]["content"]
            assert "def add(a, b):\n    </before_cursor>" in str(chat)
        finally:
            await stop(client)


ZETA = (
    "```calc.py\n<|editable_region_start|>\n"
    'def area(w, h, unit):\n    return w * h\n\n\nprint(area(2, 3, "m"))\n'
    "<|editable_region_end|>\n```"
)


async def test_nes_after_a_signature_change_proposes_the_call_site_edit(
    inline: Loopback, fake: FakeModelServer, folder: Path
) -> None:
    uri = opened(
        inline, folder / "calc.py", "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n"
    )
    typed(inline, uri, 2, 0, 13, ", unit")
    fake.script(text_reply(ZETA))
    where = {"line": 0, "character": 19}
    params = {"textDocument": {"uri": uri, "version": 2}, "position": where}
    answer = await inline.send("textDocument/copilotInlineEdit", params)
    assert answer == {
        "edits": [
            {
                "text": ', "m"',
                "textDocument": {"uri": uri, "version": 2},
                "range": {
                    "start": {"line": 4, "character": 15},
                    "end": {"line": 4, "character": 15},
                },
            }
        ]
    }
    prompt = str(fake.requests[0]["messages"])
    assert "<|user_cursor_is_here|>" in prompt and "<|editable_region_start|>" in prompt
    assert "-def area(w, h):" in prompt and "+def area(w, h, unit):" in prompt

    stale = {"textDocument": {"uri": uri, "version": 1}, "position": where}
    assert await inline.send("textDocument/copilotInlineEdit", stale) == {"edits": []}
    assert len(fake.posts) == 1


@pytest.mark.parametrize(
    "params",
    [
        None,
        [],
        {"textDocument": {"uri": 5, "version": 1}, "position": {"line": 0, "character": 0}},
        {"textDocument": {"uri": "file:///x", "version": True}, "position": {"line": 0}},
        {
            "textDocument": {"uri": "file:///x", "version": 1},
            "position": {"line": -1, "character": 0},
        },
    ],
)
async def test_hostile_inline_edit_params_are_refused(
    inline: Loopback, fake: FakeModelServer, params: Any
) -> None:
    with pytest.raises(RuntimeError):
        await inline.send("textDocument/copilotInlineEdit", params)
    assert fake.posts == []


async def test_a_position_past_the_end_is_the_end(
    inline: Loopback, fake: FakeModelServer, folder: Path
) -> None:
    uri = opened(inline, folder / "end.py", "x = ")
    fake.script(text_reply("1"))
    answer = await ask(inline, uri, 10**6, 10**6)
    assert answer["items"][0]["insertText"] == "1"
    assert fake.posts[0].body["prompt"] == "x = "


async def test_a_document_not_open_gets_no_suggestion(
    inline: Loopback, fake: FakeModelServer, folder: Path
) -> None:
    assert await ask(inline, (folder / "nowhere.py").as_uri(), 10**6, 10**6) == {"items": []}
    assert fake.posts == []


async def test_status_says_which_model_completes(folder: Path, fake: FakeModelServer) -> None:
    own = {"completionProvider": "custom", "completionBaseUrl": fake.base_url}
    with kept_logging():
        client = await start(folder, {**settings(fake), **own, "completionModel": "coder"})
        try:
            answer = await client.command("rhema.status", {})
        finally:
            await stop(client)
    assert answer["completion"] == {
        "enabled": True,
        "provider": "custom",
        "model": "coder",
        "baseUrl": fake.base_url,
    }


async def test_the_prompt_carries_what_the_imports_name_and_never_a_protected_file(
    inline: Loopback, fake: FakeModelServer, folder: Path
) -> None:
    (folder / "geometry").mkdir()
    (folder / "geometry" / "__init__.py").write_text("")
    (folder / "geometry" / "shapes.py").write_text(
        "import math\n\n\ndef scale(value, factor):\n"
        '    """Multiply value by factor."""\n    return value * factor\n\n\n'
        "def unused():\n    return 0\n"
    )
    (folder / ".env").write_text("API_KEY=sk-live-secret\n")
    (folder / "config.py").symlink_to(folder / ".env")  # a protected file behind a name
    (folder / "web").mkdir()
    (folder / "web" / "units.ts").write_text(
        "export function toPixels(mm: number): number {\n  return mm * 3.78\n}\n"
    )
    (folder / "web" / ".env.ts").write_text("export const TOKEN = 'sk-ts-secret'\n")
    source = "from geometry.shapes import scale\nfrom config import API_KEY\n\nresult = "
    uri = opened(inline, folder / "main.py", source)
    fake.script(text_reply("scale(2, 3)"), text_reply("toPixels(1)"))
    answer = await ask(inline, uri, 3, 9)
    assert answer["items"][0]["insertText"] == "scale(2, 3)"
    prompt = fim_posts(fake)[0].body["prompt"]
    assert "# geometry/shapes.py:\n# def scale(value, factor):" in prompt
    assert "#     return value * factor\n" in prompt
    assert "unused" not in prompt
    assert prompt.endswith(source)  # the context is before the prefix
    assert "sk-live-secret" not in prompt and "API_KEY=" not in prompt

    script = "import { toPixels } from './units'\nimport { TOKEN } from './.env'\nconst w = "
    uri = opened(inline, folder / "web" / "page.ts", script)
    await ask(inline, uri, 2, 10)
    prompt = fim_posts(fake)[1].body["prompt"]
    assert "// web/units.ts:\n// export function toPixels(mm: number): number {" in prompt
    assert "sk-ts-secret" not in prompt
