"""Prompts refused as busy, through the real server process: a prompt sent
while its session runs a turn is refused and reserves no turn number, so
the session's turns stay 1, 2, 3 (the door kit registers the run before the
number is reserved)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply


async def _turns(client: EditorClient, session: str) -> int:
    listed = await client.command("rhema.sessions", {})
    return int(next(s for s in listed if s["session"] == session)["turns"])


async def _streaming(client: EditorClient, turn: int) -> None:
    async with asyncio.timeout(30):
        while not any(
            e["turn"] == turn and e["event"]["type"] == "text_delta" for e in client.state.events
        ):
            client.state.event_arrived.clear()
            await client.state.event_arrived.wait()


async def test_prompts_refused_as_busy_leave_no_gap_in_the_turn_numbers(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(
        text_reply("One."), text_reply("word " * 3000, chunk=5, delay=0.002), text_reply("Three.")
    )
    client = await start_editor(
        "neovim@v0.11",
        [workspace],
        settings_for(fake, mode="ask"),
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
    )
    try:
        session = (await client.command("rhema.turn", {"prompt": "one"}))["session"]
        running = asyncio.ensure_future(
            client.command("rhema.turn", {"prompt": "two", "session": session})
        )
        await _streaming(client, 2)

        refused = await asyncio.gather(
            *[
                client.command("rhema.turn", {"prompt": f"refused {n}", "session": session})
                for n in range(5)
            ],
            return_exceptions=True,
        )
        assert all(isinstance(error, JsonRpcException) for error in refused)
        assert all("already running a turn" in str(error) for error in refused)
        assert await _turns(client, session) == 2

        await client.command("rhema.cancel", {"session": session})
        assert (await asyncio.wait_for(running, 30))["turn"] == 2
        third = await client.command("rhema.turn", {"prompt": "three", "session": session})

        assert third["turn"] == 3
        assert await _turns(client, session) == 3
    finally:
        await client.shutdown_session()
