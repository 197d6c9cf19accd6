"""Project rules over ACP (``rhema-lsp acp``), the same pipeline as the
language server's: the root ``AGENTS.md`` in the system prompt, byte-identical
from step to step, ``pkg/AGENTS.md`` with the first tool result in ``pkg/``
(also when the files are read through the client's buffers), once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply


def system_of(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def tool_texts(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("fs", [True, False], ids=["client-fs", "disk"])
async def test_rules_reach_the_model_over_acp(
    fake: FakeModelServer, state: Path, workspace: Path, fs: bool
) -> None:
    (workspace / "AGENTS.md").write_text("Root rule: tabs.\n")
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "AGENTS.md").write_text("Pkg rule: typed.\n")
    (workspace / "pkg" / "mod.py").write_text("VALUE = 1\n")
    read = ("read_file", {"path": "pkg/mod.py"})
    fake.script(tool_reply(read), tool_reply(read), text_reply("Read it."))
    async with start_agent(RecordingClient(), fake, state, fs=fs) as (conn, _init):
        session = (await conn.new_session(cwd=str(workspace))).session_id
        response = await conn.prompt(session_id=session, prompt=[text_block("read pkg")])
    assert response.stop_reason == "end_turn"
    systems = [system_of(request) for request in fake.requests]
    assert len(set(systems)) == 1
    assert '<rules file="AGENTS.md">\nRoot rule: tabs.\n</rules>' in systems[0]
    first, second = tool_texts(fake.requests[2])
    assert "VALUE = 1" in first
    assert '<rules file="pkg/AGENTS.md">\nPkg rule: typed.\n</rules>' in first
    assert "Pkg rule" not in second
