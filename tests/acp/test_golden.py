"""Golden JSON pins the wire: the ``initialize`` and ``session/new`` answers
(both sent before the SDK loads) and the
``tool_call_update`` that shows an edit, exactly as the agent sends them
(paths and the version replaced by placeholders). Regenerate a file by
deleting it and running the test once; review the diff like code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp import text_block

from rhema_lsp import __version__
from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

GOLDEN = Path(__file__).parent / "golden"


def matches_golden(
    name: str, message: dict[str, Any], replace: dict[str, str], workspace: Path | None = None
) -> None:
    text = json.dumps(message, indent=2, sort_keys=True)
    if workspace is not None:
        text = text.replace(str(workspace.resolve()), "<workspace>")
    for real, placeholder in replace.items():
        text = text.replace(real, placeholder)
    path = GOLDEN / name
    if not path.exists():
        path.write_text(text + "\n")
        raise AssertionError(f"{path} was missing and has been written; check it and rerun")
    assert json.loads(text) == json.loads(path.read_text())


async def test_the_initialize_answer(fake: FakeModelServer, state: Path) -> None:
    wire: list[dict[str, Any]] = []
    # a model that reads images (the fake's own name says nothing of them)
    async with start_agent(RecordingClient(), fake, state, "--vision", wire=wire):
        pass
    answer = next(m for m in wire if m.get("id") == 0)
    matches_golden("initialize.json", answer, {f'"{__version__}"': '"<version>"'})


async def test_the_session_new_answer_sent_before_the_sdk_loads(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    wire: list[dict[str, Any]] = []
    async with start_agent(RecordingClient(), fake, state, wire=wire) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
    answer = next(m for m in wire if m.get("id") == 1)
    matches_golden("session_new.json", answer, {session.session_id: "<session>"})


async def test_the_update_that_shows_an_edit(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(
        tool_reply(("edit_file", {"path": "hello.py", "old_text": "hello ", "new_text": "hi "})),
        text_reply("Done."),
    )
    wire: list[dict[str, Any]] = []
    async with start_agent(RecordingClient(), fake, state, wire=wire) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("say hi")])
    updates = [
        m["params"]["update"]
        for m in wire
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "tool_call_update"
        and m["params"]["update"].get("status") == "completed"
    ]
    assert len(updates) == 1
    matches_golden("edit_update.json", updates[0], {}, workspace)
