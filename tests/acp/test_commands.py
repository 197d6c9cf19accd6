"""Slash commands over a real connection (the Python SDK's client): a new
session is told its commands (``available_commands_update``, after the
``session/new`` answer), and a prompt that starts with one runs it instead
of a model turn (no model request; the answer in the update stream; the
prompt ends ``end_turn``): ``/status``, ``/undo`` restoring the file a turn
edited, ``/rewind 1``, ``/compact``. A prompt starting with ``/`` that names
no command is an ordinary prompt."""

from __future__ import annotations

from pathlib import Path

from acp import text_block
from acp.client.connection import ClientSideConnection
from acp.schema import AvailableCommandsUpdate

from tests.acp.client import RecordingClient, start_agent
from tests.acp.test_both_doors import EDIT
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply


async def _said(client: RecordingClient, conn: ClientSideConnection, sid: str, text: str) -> str:
    before = len(client.message_text())
    answer = await conn.prompt(session_id=sid, prompt=[text_block(text)])
    assert answer.stop_reason == "end_turn"
    return client.message_text()[before:]


async def test_commands_are_offered_and_run_instead_of_a_turn(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(tool_reply(EDIT), text_reply("Edited."), text_reply("Not a command."))
    original = (workspace / "hello.py").read_text()
    client = RecordingClient()
    async with start_agent(client, fake, state, fs=False) as (conn, _init):
        sid = (await conn.new_session(cwd=str(workspace))).session_id
        await client.wait_for(lambda: bool(client.of(AvailableCommandsUpdate)))
        (offered,) = client.of(AvailableCommandsUpdate)
        names = [c.name for c in offered.available_commands]
        assert names == ["status", "compact", "rewind", "undo"]
        (rewind,) = [c for c in offered.available_commands if c.name == "rewind"]
        assert rewind.input is not None and rewind.input.root.hint

        assert "Nothing yet" in await _said(client, conn, sid, "/compact")
        await conn.prompt(session_id=sid, prompt=[text_block("say hi")])
        assert '"hi "' in (workspace / "hello.py").read_text()
        status = await _said(client, conn, sid, "/status")
        assert "mode edit" in status and "model fake-model" in status and "1 turn" in status
        undone = await _said(client, conn, sid, "/undo")
        assert "Undid the changes of turn 1" in undone and "hello.py" in undone
        assert (workspace / "hello.py").read_text() == original
        assert "Say which turn" in await _said(client, conn, sid, "/rewind soon")
        assert "Rewound to before turn 1" in await _said(client, conn, sid, "/rewind 1")
        assert "Nothing to compact" in await _said(client, conn, sid, "/compact")
        assert await _said(client, conn, sid, "/nope is this a command?") == "Not a command."
    assert len(fake.requests) == 3  # the edit's two steps, and /nope's prompt
    assert fake.requests[2]["messages"][-1]["content"] == "/nope is this a command?"
