"""Hostile paths at the ACP door: a ``cwd`` or an additional directory that
confines nothing (``/``, a folder above the home directory, ``/etc``,
``/tmp`` itself) is refused with the reason,
and a store the agent had to move or replace is told to the user in the
agent's first message of that folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply

REFUSED = {
    "root": "file system's root",
    "above-home": "holds your home directory",
    "etc": "the system's own files",
    "tmp": "a system folder",
}
"""Each root that confines nothing, and the words of its reason."""


@pytest.mark.parametrize("where", list(REFUSED))
async def test_a_root_that_confines_nothing_is_refused_with_the_reason(
    fake: FakeModelServer, state: Path, workspace: Path, tmp_path: Path, where: str
) -> None:
    home = tmp_path / "home" / "alice"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("SENTINEL-AWS")
    bad = {"root": "/", "above-home": str(home.parent), "etc": "/etc", "tmp": "/tmp"}[where]
    async with start_agent(RecordingClient(), fake, state, env={"HOME": str(home)}) as (conn, _):
        for cwd, extra in ((bad, None), (str(workspace), [bad])):
            with pytest.raises(RequestError) as raised:
                await conn.new_session(cwd=cwd, additional_directories=extra)
            assert raised.value.code == -32602
            assert REFUSED[where] in str(raised.value.data or raised.value)
    assert fake.requests == []
    assert not (home.parent / ".rhema").exists()


async def test_a_linked_rhema_folder_is_told_in_the_first_message(
    fake: FakeModelServer, state: Path, workspace: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workspace / ".rhema").symlink_to(elsewhere, target_is_directory=True)
    fake.script(text_reply("first"), text_reply("second"))
    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
        told = client.message_text()
        assert told.startswith("⚠ Sessions of")
        assert "symbolic link" in told
        assert told.endswith("first")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
        assert client.message_text().count("⚠") == 1
    assert list(elsewhere.iterdir()) == []
