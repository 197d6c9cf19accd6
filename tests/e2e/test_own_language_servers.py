"""The agent's own language servers behind the LSP door: an editor that
does not answer ``rhema/language`` (it declares no ``language``) keeps a
buffer open with unsaved text; the ``diagnostics`` tool is answered by the
agent's basedpyright about that text (not the file on disk),
``rhema.status`` lists the running server with its pid, and the server is
gone once the editor shuts rhema down."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import OUR_CLIENTS, start_editor
from tests.editors.tool_results import tool_results
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

pytestmark = pytest.mark.e2e

CORE = 'def greet(name: str) -> str:\n    return "Hello, " + name\n'
USE = 'from pkg.core import greet\n\nprint(greet("Ann"))\n'


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_an_editor_without_language_gets_the_agents_servers_until_shutdown(
    fake: FakeModelServer, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "core.py").write_text(CORE)
    (folder / "pkg" / "use.py").write_text(USE)
    settings = settings_for(fake, mode="edit")
    client = await start_editor(
        "visual_studio_code",
        [folder],
        settings,
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
        initialization_options={**settings, "clientCapabilities": dict(OUR_CLIENTS)},
    )
    stopped = False
    try:
        # Unsaved: the buffer passes 42 where a str is expected; the disk does not.
        client.open(folder / "pkg" / "use.py", USE.replace('"Ann"', "42"))
        fake.script(tool_reply(("diagnostics", {"path": "pkg/use.py"})), text_reply("seen"))
        result = await client.command("rhema.turn", {"prompt": "any problems?"})
        assert result["stopReason"] == "end_turn"
        said = tool_results(fake.requests)["diagnostics"]
        assert "pkg/use.py:3:" in said and '"Literal[42]"' in said, said
        assert "(basedpyright)" in said, said

        status = await client.command("rhema.status", {})
        running = [s for s in status["languageServers"] if s.get("pid")]
        assert [s["name"] for s in running] == ["basedpyright"], status["languageServers"]
        pid = running[0]["pid"]
        assert _alive(pid)

        await client.shutdown_session()
        stopped = True
        for _ in range(100):  # the server's exit is awaited above; its child may lag a little
            if not _alive(pid):
                break
            await asyncio.sleep(0.05)
        assert not _alive(pid), f"basedpyright {pid} outlived the server"
    finally:
        if not stopped:
            await client.shutdown_session()
