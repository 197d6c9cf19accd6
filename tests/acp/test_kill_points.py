"""kill -9 of a real ``rhema-lsp acp`` just after the client applied a change
(``RHEMA_KILL_AT=change.applied``, the point whose post-image is not yet
recorded), then the store reopened through the other doors: the session
holds its prompt once, the turn stays its own (interrupted) record, the next
prompt gets a new turn, and ``rhema-lsp rewind`` restores the file exactly.
(The LSP door at every point: ``tests/e2e/test_kill_points.py``.)"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from acp import text_block

from rhema_lsp.runs.points import CHANGE_APPLIED, KILL_AT
from rhema_lsp.sessions import SessionStore
from tests.acp.client import RecordingClient, start_agent
from tests.e2e.test_cli import ENTRY, run
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

HELLO = 'def greet(name):\n    return "hello " + name\n'


async def test_a_kill_after_the_client_applied_a_change_leaves_it_rewindable(
    fake: FakeModelServer, state: Path, workspace: Path, tmp_path: Path
) -> None:
    fake.script(
        tool_reply(("edit_file", {"path": "hello.py", "old_text": "hello ", "new_text": "hi "})),
        text_reply("never sent"),
    )
    client = RecordingClient()
    async with start_agent(client, fake, state, env={KILL_AT: CHANGE_APPLIED}) as (conn, _):
        process = client.agent_process
        assert process is not None
        session = (await conn.new_session(cwd=str(workspace))).session_id
        pending = asyncio.ensure_future(
            conn.prompt(session_id=session, prompt=[text_block("say hi")])
        )
        code = await asyncio.wait_for(process.wait(), 60)
        pending.cancel()
    assert code == -signal.SIGKILL
    for path, text in client.buffers.items():  # the editor saves what it was sent
        await asyncio.to_thread(Path(path).write_text, text)
    assert (workspace / "hello.py").read_text() != HELLO

    store = await SessionStore.open(workspace)
    try:
        history = (await store.load(session)).history
        (turn,) = await store.checkpoints.turns(session)
        assert [m.text for m in history if m.role == "user"] == ["say hi"]
        assert (turn.turn, turn.title, turn.ended) == (1, "say hi", False)
        assert [f.uri for f in turn.files] == [(workspace / "hello.py").as_uri()]
        assert [info.id for info in await store.list()] == [session]
        assert await store.turn_numbers.reserve(session) == 2  # a new number
    finally:
        await store.close()

    rewind = [*ENTRY, "rewind", "--folder", str(workspace), "--session", session]
    undone = run([*rewind, "--turn", "1", "--code"], tmp_path)
    assert undone.returncode == 0, undone.stderr
    assert (workspace / "hello.py").read_text() == HELLO
