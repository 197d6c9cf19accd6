"""One session through both front doors: started over ACP (``rhema-lsp acp``)
and continued over LSP (``python -m rhema_lsp`` driven by a pytest-lsp
editor), and the other way round; and an ACP turn's edits rewound by the
headless client (``rhema-lsp rewind``) and from an editor (``rhema.rewind``).
Every process is real and shares the folder's session store; the model's
requests show what history each door handed on."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp import text_block
from acp.schema import ToolCallStart, UserMessageChunk

from tests.acp.client import RecordingClient, start_agent
from tests.e2e.editor_client import start_editor
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

EDIT = ("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": '"hi "'})
HEY = ("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": '"hey "'})


def lsp_settings(fake: FakeModelServer) -> dict[str, object]:
    return {
        "provider": "custom",
        "protocol": "openai",
        "baseUrl": fake.base_url,
        "model": "fake-model",
        "mode": "edit",
    }


def conversation(request: dict[str, Any]) -> list[tuple[str, str]]:
    """A model request's messages as ``(role, what)``: the text, or the tool
    calls an assistant message asks for."""
    seen = []
    for message in request["messages"]:
        if message["role"] == "system":
            continue
        calls = message.get("tool_calls") or []
        if calls:
            seen.append((message["role"], " ".join(c["function"]["name"] for c in calls)))
        else:
            seen.append((message["role"], str(message["content"] or "")))
    return seen


async def test_a_session_started_over_acp_continues_over_lsp(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(tool_reply(EDIT), text_reply("Greets with hi now."), text_reply("Yes, hi."))
    async with start_agent(RecordingClient(), fake, state, fs=False) as (conn, _init):
        session = (await conn.new_session(cwd=str(workspace))).session_id
        response = await conn.prompt(session_id=session, prompt=[text_block("say hi instead")])
        assert response.stop_reason == "end_turn"
    assert '"hi "' in (workspace / "hello.py").read_text()

    editor = await start_editor(
        "visual_studio_code",
        [workspace],
        lsp_settings(fake),
        env={"XDG_STATE_HOME": str(state), "OPENAI_API_KEY": ""},
    )
    try:
        result = await editor.command("rhema.turn", {"prompt": "did it?", "session": session})
    finally:
        await editor.shutdown_session()

    assert (result["session"], result["turn"], result["stopReason"]) == (session, 2, "end_turn")
    seen = conversation(fake.requests[2])
    assert seen[:3] == [
        ("user", "say hi instead"),
        ("assistant", "edit_file"),
        ("tool", seen[2][1]),
    ]
    assert "edited hello.py" in seen[2][1]
    assert seen[3:] == [("assistant", "Greets with hi now."), ("user", "did it?")]


async def test_a_session_started_over_lsp_loads_and_continues_over_acp(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(tool_reply(EDIT), text_reply("Now it says hi."), text_reply("It did."))
    editor = await start_editor(
        "visual_studio_code",
        [workspace],
        lsp_settings(fake),
        env={"XDG_STATE_HOME": str(state), "OPENAI_API_KEY": ""},
    )
    try:
        result = await editor.command("rhema.turn", {"prompt": "greet with hi"})
    finally:
        await editor.shutdown_session()
    assert result["stopReason"] == "end_turn"
    session = result["session"]

    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        await conn.load_session(cwd=str(workspace), session_id=session)
        replayed = [type(update).__name__ for _, update in client.updates]
        assert replayed == [
            "UserMessageChunk",
            "ToolCallStart",
            "AgentMessageChunk",
            "AvailableCommandsUpdate",
        ]
        assert client.of(UserMessageChunk)[0].content.text == "greet with hi"
        call = client.of(ToolCallStart)[0]
        assert (call.kind, call.status, call.title) == ("edit", "completed", "Edit hello.py")
        assert client.message_text() == "Now it says hi."

        response = await conn.prompt(session_id=session, prompt=[text_block("did it?")])

    assert response.stop_reason == "end_turn"
    seen = conversation(fake.requests[2])
    assert [role for role, _ in seen] == ["user", "assistant", "tool", "assistant", "user"]
    assert seen[0] == ("user", "greet with hi")
    assert seen[1] == ("assistant", "edit_file")
    assert "edited hello.py" in seen[2][1]
    assert seen[3:] == [("assistant", "Now it says hi."), ("user", "did it?")]


def headless_rewind(workspace: Path, state: Path, session: str, turn: int) -> dict[str, Any]:
    """``rhema-lsp rewind --code`` of ``session`` to before ``turn``, in a process of its own."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "rhema_lsp", "rewind", "--folder", str(workspace)),
            *("--session", session, "--turn", str(turn), "--code", "--json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_STATE_HOME": str(state), "XDG_CONFIG_HOME": str(state / "config")},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


async def test_an_acp_turns_edits_rewind_headless_and_from_an_editor_exactly(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    original = (workspace / "hello.py").read_bytes()
    hello = (workspace / "hello.py").as_uri()
    fake.script(
        tool_reply(EDIT), text_reply("Greets with hi."), tool_reply(HEY), text_reply("Hey now.")
    )
    async with start_agent(RecordingClient(), fake, state, fs=False) as (conn, _init):
        session = (await conn.new_session(cwd=str(workspace))).session_id
        first = await conn.prompt(session_id=session, prompt=[text_block("say hi")])
        assert first.stop_reason == "end_turn"
        assert '"hi "' in (workspace / "hello.py").read_text()

        # another process, while the agent still runs (the session is idle)
        undone = await asyncio.to_thread(headless_rewind, workspace, state, session, 1)
        assert (workspace / "hello.py").read_bytes() == original
        assert undone["restored"] == [hello]

        second = await conn.prompt(session_id=session, prompt=[text_block("say hey")])
        assert second.stop_reason == "end_turn"
    assert '"hey "' in (workspace / "hello.py").read_text()

    editor = await start_editor(
        "visual_studio_code",
        [workspace],
        lsp_settings(fake),
        env={"XDG_STATE_HOME": str(state), "OPENAI_API_KEY": ""},
    )
    try:
        changes = await editor.command("rhema.changes", {"session": session})
        assert [turn["turn"] for turn in changes["turns"]] == [1, 2]
        result = await editor.command(
            "rhema.rewind", {"session": session, "turn": 2, "what": "code"}
        )
        assert (result["restored"], result["conflicts"]) == ([hello], [])
        for uri in result["save"]:
            editor.save(uri)
    finally:
        await editor.shutdown_session()
    assert (workspace / "hello.py").read_bytes() == original
