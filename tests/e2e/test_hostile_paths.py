"""Hostile paths at the editor's door: context URIs, the store's own place,
and workspace folders that confine nothing.

The real server, a fake model recording every request: an escape named as
``context`` is refused with a clear error before the model is called (so no
byte of it can reach a model), the server keeps serving, a FIFO never blocks
it, and a repository's ``.rhema`` link is never written through. A folder
that confines nothing (``/``, the home directory or a folder above it,
``/etc``, ``/tmp`` itself) is not served: the user is told why and nothing
under it is read.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

SECRET = "SENTINEL-CONTEXT-4d1e"


@pytest.fixture
async def code(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> AsyncIterator[EditorClient]:
    started = await start_editor(
        "visual_studio_code",
        [workspace],
        settings_for(fake, mode="edit"),
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": SECRET},
    )
    yield started
    await started.shutdown_session()


async def refused(client: EditorClient, uri: str) -> str:
    with pytest.raises(JsonRpcException) as raised:
        await client.command("rhema.turn", {"prompt": "What is this?", "context": [{"uri": uri}]})
    assert raised.value.code == -32602
    return str(raised.value)


@pytest.mark.parametrize("escape", ["sibling", "dotdot", "environ", "symlink", "hardlink", "git"])
async def test_a_context_escape_is_refused_and_nothing_reaches_the_model(
    code: EditorClient, workspace: Path, fake: FakeModelServer, escape: str
) -> None:
    outside = workspace.parent / "secret.txt"
    outside.write_text(SECRET)
    if escape == "sibling":
        uri = outside.as_uri()
    elif escape == "dotdot":
        uri = f"{workspace.as_uri()}/../secret.txt"
    elif escape == "environ":
        uri = "file:///proc/self/environ"  # the server's environment holds the key
    elif escape == "symlink":
        (workspace / "notes.txt").symlink_to(outside)
        uri = (workspace / "notes.txt").as_uri()
    elif escape == "hardlink":
        os.link(outside, workspace / "notes.txt")
        uri = (workspace / "notes.txt").as_uri()
    else:
        (workspace / ".git").mkdir()
        (workspace / ".git" / "config").write_text(SECRET)
        uri = (workspace / ".git" / "config").as_uri()
    message = await refused(code, uri)
    assert "refused" in message
    assert SECRET not in message
    assert fake.requests == []
    fake.script(text_reply("still here"))
    answered = await code.command("rhema.turn", {"prompt": "hello"})
    assert answered["text"] == "still here"
    assert SECRET not in str(fake.requests)


async def test_a_fifo_as_context_never_blocks_the_server(
    code: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    os.mkfifo(workspace / "pipe")
    # Nothing ever writes to the FIFO: a blocking read would hang the server.
    with anyio.fail_after(60):
        message = await refused(code, (workspace / "pipe").as_uri())
        assert "not a regular file" in message
        status = await code.command("rhema.status", {})
    assert status["folders"] == [str(workspace)]
    assert fake.requests == []


async def test_a_protected_attachment_asks_first(
    code: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    # Not the server's own key (that one the key guard redacts from every request).
    token = "SENTINEL-DOTENV-93b2"
    (workspace / ".env").write_text(f"TOKEN={token}\n")
    message = await refused(code, (workspace / ".env").as_uri())
    assert "did not allow" in message
    (question,) = code.state.questions
    assert ".env" in question.message
    assert fake.requests == []
    code.state.answer = "Allow"
    fake.script(text_reply("it sets a token"))
    await code.command(
        "rhema.turn",
        {"prompt": "What is this?", "context": [{"uri": (workspace / ".env").as_uri()}]},
    )
    assert token in fake.requests[0]["messages"][-1]["content"]


async def test_a_linked_rhema_folder_is_never_written_through(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workspace / ".rhema").symlink_to(elsewhere, target_is_directory=True)
    state = tmp_path / "state"
    client = await start_editor(
        "visual_studio_code",
        [workspace],
        settings_for(fake, mode="edit"),
        env={"XDG_STATE_HOME": str(state), "OPENAI_API_KEY": ""},
    )
    try:
        fake.script(text_reply("answered"))
        result = await client.command("rhema.turn", {"prompt": "hello"})
        assert result["text"] == "answered"
        warnings = [m.message for m in client.messages if ".rhema" in m.message]
        assert len(warnings) == 1
        assert "is a symbolic link" in warnings[0]
        listed = await client.command("rhema.sessions", {})
        assert [s["session"] for s in listed] == [result["session"]]
    finally:
        await client.shutdown_session()
    assert list(elsewhere.iterdir()) == []
    (database,) = (state / "rhema-lsp" / "sessions").glob("*.sqlite3")
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT id FROM sessions").fetchall() == [(result["session"],)]


async def test_a_corrupt_store_is_moved_aside_and_the_user_is_told(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / ".rhema").mkdir()
    (workspace / ".rhema" / "sessions.sqlite3").write_bytes(b"not a database" * 100)
    client = await start_editor(
        "visual_studio_code",
        [workspace],
        settings_for(fake, mode="edit"),
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
    )
    try:
        assert await client.command("rhema.sessions", {}) == []
        (aside,) = (workspace / ".rhema").glob("sessions.sqlite3.corrupt-*")
        told = [m.message for m in client.messages if "could not be read" in m.message]
        assert len(told) == 1
        assert str(aside) in told[0]
    finally:
        await client.shutdown_session()


REFUSED = {
    "root": "file system's root",
    "home": "is your home directory",
    "above-home": "holds your home directory",
    "etc": "the system's own files",
    "tmp": "a system folder",
}
"""Each folder that confines nothing, and the words of its reason."""


@pytest.mark.parametrize("folder", list(REFUSED))
async def test_a_folder_that_confines_nothing_is_refused_with_the_reason(
    fake: FakeModelServer, tmp_path: Path, folder: str
) -> None:
    home = tmp_path / "home" / "alice"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(SECRET)
    served = {
        "root": Path("/"),
        "home": home,
        "above-home": home.parent,
        "etc": Path("/etc"),
        "tmp": Path("/tmp"),
    }[folder]
    secret = home / ".aws" / "credentials" if folder != "etc" else Path("/etc/passwd")
    fake.script(tool_reply(("read_file", {"path": str(secret.relative_to(served))})))
    client = await start_editor(
        "visual_studio_code",
        [served],
        settings_for(fake, mode="edit"),
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(home), "OPENAI_API_KEY": ""},
    )
    try:
        with pytest.raises(JsonRpcException) as raised:
            await client.command("rhema.turn", {"prompt": "read the keys"})
        assert raised.value.code == -32602
        assert "no workspace folder Rhema can work in" in str(raised.value)
        assert any(REFUSED[folder] in m.message for m in client.messages)
        assert (await client.command("rhema.status", {}))["folders"] == []
        assert fake.requests == []
    finally:
        await client.shutdown_session()
    assert not (home / ".rhema").exists()
    assert not (home.parent / ".rhema").exists()
