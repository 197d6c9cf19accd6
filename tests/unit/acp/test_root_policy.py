"""The ACP door's roots under the root policy (:mod:`rhema_lsp.tools.roots`):
a ``cwd`` or an additional directory above the home directory, ``/etc`` or
``/tmp`` itself is refused with the reason, by ``session/new``,
``session/load``, ``session/resume`` and ``session/list`` alike, before any
store is opened there or the model is asked anything."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from acp import RequestError

from rhema_lsp.acp.agent import RhemaAcpAgent
from tests.acp.client import RecordingClient
from tests.fakes.model_server import FakeModelServer
from tests.unit.acp.test_prompt_turns import connect


@pytest.fixture
def alice(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home" / "alice"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("SENTINEL-AWS")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
async def agent(alice: Path, openai_fake: FakeModelServer) -> AsyncIterator[RhemaAcpAgent]:
    opened = await connect(openai_fake, RecordingClient())
    try:
        yield opened
    finally:
        await opened.shutdown()


def refused_for(raised: pytest.ExceptionInfo[RequestError]) -> str:
    assert raised.value.code == -32602
    return str(raised.value.data or raised.value)


@pytest.mark.parametrize("where", ["above-home", "/etc", "/tmp"])
@pytest.mark.parametrize("door", ["new", "additional", "load", "resume", "list"])
async def test_a_root_that_confines_nothing_is_refused_at_every_door(
    agent: RhemaAcpAgent,
    alice: Path,
    project: Path,
    openai_fake: FakeModelServer,
    where: str,
    door: str,
) -> None:
    bad = str(alice.parent if where == "above-home" else Path(where))
    asked = {
        "new": lambda: agent.new_session(cwd=bad),
        "additional": lambda: agent.new_session(cwd=str(project), additional_directories=[bad]),
        "load": lambda: agent.load_session(cwd=bad, session_id="s"),
        "resume": lambda: agent.resume_session(cwd=bad, session_id="s"),
        "list": lambda: agent.list_sessions(cwd=bad),
    }[door]
    with pytest.raises(RequestError) as raised:
        await asked()
    reason = refused_for(raised)
    assert ("holds your home directory" if where == "above-home" else "system") in reason
    assert not (alice.parent / ".rhema").exists()
    assert openai_fake.requests == []
    assert agent.sessions == {}
