"""``rhema-lsp serve`` stops the same way when its stdin ends and on
``SIGTERM``: the running turn is cancelled and checkpointed (its partial
answer kept, marked interrupted), the session's lease let go and the store
closed, and the process exits: 0 on ``SIGTERM`` (asked to stop, it
stopped), 1 at the input's end without ``shutdown`` (as LSP says of an
``exit`` without ``shutdown``). (The ACP door's twin is
``tests/acp/test_shutdown.py``.)"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from rhema_lsp.runs.driver import INTERRUPTED
from rhema_lsp.sessions import SessionStore
from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import start_editor
from tests.fakes.model_server import FakeModelServer, text_reply


async def stored_sessions(folder: Path) -> list[tuple[bool, list[str], str]]:
    """Each stored session of ``folder``: whether it is running, its roles,
    its last message's text."""
    store = await SessionStore.open(folder)
    try:
        found = []
        for info in await store.list():
            session = await store.load(info.id)
            roles = [str(m.role) for m in session.history]
            found.append((info.running, roles, session.history[-1].text))
        return found
    finally:
        await store.close()


@pytest.mark.parametrize("how", ["sigterm", "stdin closed"])
async def test_serve_checkpoints_a_running_turn_and_exits_cleanly(
    workspace: Path, fake: FakeModelServer, tmp_path: Path, how: str
) -> None:
    client = await start_editor(
        "visual_studio_code",
        [workspace],
        settings_for(fake, mode="edit"),
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
    )
    server = client._server
    assert server is not None
    fake.script(text_reply("word " * 4000, chunk=5, delay=0.005))
    pending: asyncio.Future[Any] = asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="rhema.turn", arguments=[{"prompt": "talk"}]),
        )
    )
    try:
        await client.wait_for_event("text_delta")
        if how == "sigterm":
            os.kill(server.pid, signal.SIGTERM)
        else:
            assert server.stdin is not None
            server.stdin.close()
        code = await asyncio.wait_for(server.wait(), 30)
        if how == "sigterm":  # the client still listens: the turn answers before the exit
            result = await asyncio.wait_for(pending, 5)
            assert result["stopReason"] == "cancelled"
    finally:
        pending.cancel()
        await client.stop()

    assert code == (0 if how == "sigterm" else 1)
    [(running, roles, last)] = await stored_sessions(workspace)
    assert not running
    assert roles == ["user", "assistant"]
    assert last.endswith(INTERRUPTED) and last.startswith("word")
    assert client.events_of("turn_end")[-1]["stopReason"] == "cancelled"
