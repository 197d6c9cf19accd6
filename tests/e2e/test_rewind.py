"""Rewind from durable checkpoints, against the real server: a turn's files
come back exactly after the server was killed and restarted (in another
"window", with the other editor's capabilities), a file the user changed
since is a reported conflict that survives, a conversation rewind continues
the session from the earlier point, and a crafted store cannot make a
rewind write outside the workspace."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

ORIGINAL = {
    "a.py": "def a():\n    return 1\n",
    "b.py": "def b():\n    return 2\n",
    "c.py": "def c():\n    return 3\n",
}

# Edits are applied in the negotiated position encoding, against versions:
# each recorded editor's capabilities give another path.
pytestmark = pytest.mark.per_editor


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def user_texts(request: dict[str, object]) -> list[str]:
    messages = request["messages"]
    assert isinstance(messages, list)
    return [str(m["content"]) for m in messages if m["role"] == "user"]


async def kill(client: EditorClient) -> None:
    """The server dies without a goodbye (SIGKILL), as in a crash."""
    server = client._server
    assert server is not None
    os.kill(server.pid, signal.SIGKILL)
    await server.wait()
    await client.stop()


def three_file_turn(fake: FakeModelServer) -> None:
    fake.script(
        tool_reply(
            ("edit_file", {"path": "a.py", "old_text": "return 1", "new_text": "return 10"}),
            ("edit_file", {"path": "b.py", "old_text": "return 2", "new_text": "return 20"}),
            ("write_file", {"path": "c.py", "content": "def c():\n    return 30\n"}),
        ),
        text_reply("changed three files"),
    )


async def test_rewind_after_a_restart_restores_three_files_exactly_and_spares_the_user(
    workspace: Path, fake: FakeModelServer, tmp_path: Path, editor: str
) -> None:
    for name, text in ORIGINAL.items():
        (workspace / name).write_text(text)
    before = {name: digest(workspace / name) for name in ORIGINAL}
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""}
    settings = settings_for(fake, mode="edit")
    first = await start_editor(editor, [workspace], settings, env=env)
    three_file_turn(fake)
    result = await first.command("rhema.turn", {"prompt": "change a, b and c"})
    assert result["stopReason"] == "end_turn"
    session = result["session"]
    # The first window saves what the agent did, then crashes.
    for name in ORIGINAL:
        first.save((workspace / name).as_uri())
    assert (workspace / "a.py").read_text() == "def a():\n    return 10\n"
    await kill(first)

    other = "visual_studio_code" if editor.startswith("neovim") else "neovim@v0.11"
    second = await start_editor(other, [workspace], settings, env=env)
    try:
        # The user changes c.py in the new window (unsaved).
        c_path = workspace / "c.py"
        second.open(c_path)
        mine = "def c():\n    return 30  # the user's\n"
        second.type_text(c_path, mine)

        done = await second.command("rhema.rewind", {"session": session, "turn": 1, "what": "code"})

        uris = {name: (workspace / name).as_uri() for name in ORIGINAL}
        assert sorted(done["restored"]) == sorted([uris["a.py"], uris["b.py"]])
        ((conflict,),) = [done["conflicts"]]
        assert conflict["uri"] == uris["c.py"]
        assert "changed since turn 1" in conflict["reason"]
        assert second.buffer(c_path).text == mine  # the user's edit survives
        assert done["messages"] is None
        # a.py and b.py were clean before the turn: the editor saves them.
        assert sorted(done["save"]) == sorted([uris["a.py"], uris["b.py"]])
        for uri in done["save"]:
            second.save(uri)
        assert digest(workspace / "a.py") == before["a.py"]
        assert digest(workspace / "b.py") == before["b.py"]

        # The user can insist: force restores c.py too.
        forced = await second.command(
            "rhema.rewind", {"session": session, "turn": 1, "what": "code", "force": True}
        )
        assert forced["restored"] == [uris["c.py"]]
        assert forced["conflicts"] == []
        assert second.buffer(c_path).text == ORIGINAL["c.py"]
        # Nothing is left to undo: a second rewind restores nothing more.
        again = await second.command("rhema.rewind", {"session": session, "turn": 1})
        assert again["restored"] == [] and again["conflicts"] == []
    finally:
        await second.shutdown_session()


async def test_conversation_rewind_continues_the_session_from_the_earlier_point(
    client: EditorClient, fake: FakeModelServer
) -> None:
    fake.script(text_reply("one"))
    first = await client.command("rhema.turn", {"prompt": "first question"})
    session = first["session"]
    fake.script(text_reply("two"))
    await client.command("rhema.turn", {"prompt": "second question", "session": session})

    done = await client.command(
        "rhema.rewind", {"session": session, "turn": 2, "what": "conversation"}
    )
    assert done["messages"] == 2  # the first prompt and its answer

    fake.script(text_reply("three"))
    third = await client.command("rhema.turn", {"prompt": "another question", "session": session})
    assert third["turn"] == 3
    assert user_texts(fake.requests[-1]) == ["first question", "another question"]
    opened = await client.command("rhema.openSession", {"session": session})
    assert [m["content"][0]["text"] for m in opened["messages"]] == [
        "first question",
        "one",
        "another question",
        "three",
    ]
    # The rewound turn stays readable, marked out of the conversation.
    changes = await client.command("rhema.changes", {"session": session})
    listed = {turn["turn"]: (turn["title"], turn["inConversation"]) for turn in changes["turns"]}
    assert listed == {
        1: ("first question", True),
        2: ("second question", False),
        3: ("another question", True),
    }
    # A turn already rewound out of the conversation cannot be rewound again.
    with pytest.raises(JsonRpcException, match="already rewound"):
        await client.command("rhema.rewind", {"session": session, "turn": 2, "what": "both"})


async def test_undo_turn_works_after_a_restart_and_changes_show_checkpoints(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    for name, text in ORIGINAL.items():
        (workspace / name).write_text(text)
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""}
    settings = settings_for(fake, mode="edit")
    first = await start_editor("visual_studio_code", [workspace], settings, env=env)
    a_path = workspace / "a.py"
    first.open(a_path)  # open and clean (same as the disk)
    three_file_turn(fake)
    result = await first.command("rhema.turn", {"prompt": "change a, b and c"})
    session = result["session"]
    await kill(first)

    second = await start_editor("visual_studio_code", [workspace], settings, env=env)
    try:
        changes = await second.command("rhema.changes", {"session": session, "turn": 1})
        ((turn,),) = [changes["turns"]]
        files = {f["path"]: f for f in turn["files"]}
        assert set(files) == set(ORIGINAL)
        assert {f["status"] for f in files.values()} == {"modified"}
        # Never saved: the disk still holds the originals, so the files are "changed".
        assert {f["state"] for f in files.values()} == {"changed"}
        content = await second.command("rhema.checkpointContent", {"uri": files["a.py"]["before"]})
        assert content["text"] == ORIGINAL["a.py"]
        assert files["a.py"]["before"].startswith("rhema-checkpoint:")

        # The disk already holds the pre-images: undoing finds them restored.
        undone = await second.command("rhema.undoTurn", {"session": session})
        assert sorted(undone["reverted"]) == sorted(
            (workspace / name).as_uri() for name in ORIGINAL
        )
        assert undone["conflicts"] == []
        listed = await second.command("rhema.changes", {"session": session})
        assert {f["state"] for f in listed["turns"][0]["files"]} == {"restored"}
    finally:
        await second.shutdown_session()


async def test_fork_starts_a_new_session_from_a_turn(
    client: EditorClient, fake: FakeModelServer
) -> None:
    fake.script(text_reply("one"))
    session = (await client.command("rhema.turn", {"prompt": "first"}))["session"]
    fake.script(text_reply("two"))
    await client.command("rhema.turn", {"prompt": "second", "session": session})

    fork = await client.command("rhema.forkSession", {"session": session, "turn": 2})
    assert fork["session"] != session and fork["turns"] == 1
    fake.script(text_reply("other"))
    more = await client.command("rhema.turn", {"prompt": "elsewhere", "session": fork["session"]})
    assert more["turn"] == 2
    assert user_texts(fake.requests[-1]) == ["first", "elsewhere"]
    original = await client.command("rhema.openSession", {"session": session})
    assert len(original["messages"]) == 4  # untouched


async def test_a_crafted_store_cannot_make_a_rewind_write_outside_the_workspace(
    client: EditorClient, workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "a.py").write_text(ORIGINAL["a.py"])
    fake.script(
        tool_reply(("edit_file", {"path": "a.py", "old_text": "return 1", "new_text": "x"})),
        text_reply("ok"),
    )
    session = (await client.command("rhema.turn", {"prompt": "edit a"}))["session"]
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    store = workspace / ".rhema" / "sessions.sqlite3"
    with sqlite3.connect(store) as conn:
        (blob,) = conn.execute("SELECT before FROM turn_files").fetchone()
        conn.execute(
            "INSERT INTO turn_files (session_id, turn, uri, before, after, clean) "
            "VALUES (?, 1, ?, ?, ?, 1)",
            (session, outside.as_uri(), blob, digest(outside)),
        )
    done = await client.command("rhema.rewind", {"session": session, "turn": 1, "what": "code"})
    assert outside.read_text() == "precious\n"
    (conflict,) = [c for c in done["conflicts"] if c["uri"] == outside.as_uri()]
    assert "not restored" in conflict["reason"]
    assert done["restored"] == [(workspace / "a.py").as_uri()]


async def test_rewind_of_some_paths_restores_only_those_files(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    """A client's per-file reject: ``paths`` restores one file of a turn, the other
    files keep the agent's changes, and a file the turn never changed is reported."""
    for name, text in ORIGINAL.items():
        (workspace / name).write_text(text)
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""}
    client = await start_editor(
        "visual_studio_code", [workspace], settings_for(fake, mode="edit"), env=env
    )
    try:
        three_file_turn(fake)
        session = (await client.command("rhema.turn", {"prompt": "change a, b and c"}))["session"]
        uris = {name: (workspace / name).as_uri() for name in ORIGINAL}
        for uri in uris.values():
            client.save(uri)
        stranger = (workspace / "hello.py").as_uri()

        done = await client.command(
            "rhema.rewind",
            {"session": session, "turn": 1, "what": "code", "paths": [uris["b.py"], stranger]},
        )

        assert done["restored"] == [uris["b.py"]]
        assert done["conflicts"] == [
            {"uri": stranger, "reason": "not changed by turn 1 or later; nothing to restore"}
        ]
        assert done["save"] == [uris["b.py"]]
        assert done["messages"] is None
        client.save(uris["b.py"])
        assert (workspace / "b.py").read_text() == ORIGINAL["b.py"]
        assert (workspace / "a.py").read_text() == "def a():\n    return 10\n"
        assert (workspace / "c.py").read_text() == "def c():\n    return 30\n"
        changes = await client.command("rhema.changes", {"session": session})
        states = {f["path"]: f["state"] for f in changes["turns"][0]["files"]}
        assert states == {"a.py": "asLeft", "b.py": "restored", "c.py": "asLeft"}
        # The rest of the turn can still be rejected afterwards.
        rest = await client.command(
            "rhema.rewind", {"session": session, "turn": 1, "what": "code", "paths": [uris["a.py"]]}
        )
        assert rest["restored"] == [uris["a.py"]] and rest["conflicts"] == []
        # `paths` takes back files only: with the conversation it is refused.
        with pytest.raises(JsonRpcException, match="needs `what: code`"):
            await client.command(
                "rhema.rewind",
                {"session": session, "turn": 1, "what": "both", "paths": [uris["c.py"]]},
            )
    finally:
        await client.shutdown_session()
