"""Worktree sessions through the LSP door, in process: ``rhema.turn`` with
``worktree: true`` runs a new session on ``rhema/<session>`` (the
checkout untouched, the branch holding the change, the next turn of the
session there again); ``rhema.sessions`` lists it with its state;
``rhema.worktreeDiff`` gives one diff per file; ``rhema.worktreeApply``
reports a conflicting local edit and writes nothing, then applies once it
is gone; ``rhema.worktreeDiscard`` removes worktree and branch. Hostile:
a worktree asked of a session in the checkout, a session without one, a
name that is a path."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rhema_lsp.runs.worktree_place import worktree_for
from rhema_lsp.server.worktrees import forget_new
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply
from tests.unit.conftest import HELLO
from tests.unit.server.loopback import Loopback, kept_logging, settings, start, stop

pytestmark = pytest.mark.process  # git


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def repo(folder: Path) -> Path:
    _git(folder, "init", "-q")
    _git(folder, "add", "hello.py")
    _git(folder, "commit", "-qm", "init")
    return folder


@pytest.fixture
async def client(repo: Path, fake: FakeModelServer) -> AsyncIterator[Loopback]:
    """The server in process on ``repo``, with no Python language server to
    start after an edit (a worktree turn's own are started and stopped with
    each turn)."""
    with kept_logging():
        quick = {"languageServers": NO_SERVER, "diagnosticsWait": 0}
        started = await start(repo, {**settings(fake), **quick})
        try:
            yield started
        finally:
            await stop(started)


def _real(path: Path) -> str:
    """The real path, or ``""`` for none."""
    return str(path.resolve()) if path.exists() else ""


NO_SERVER = {"python": {"command": ["rhema-test-no-such-language-server"]}}


def _edit(old: str, new: str) -> tuple[str, dict[str, object]]:
    return ("edit_file", {"path": "hello.py", "old_text": old, "new_text": new})


async def test_a_worktree_session_is_run_listed_reviewed_applied_and_discarded(
    client: Loopback, fake: FakeModelServer, repo: Path
) -> None:
    fake.script(tool_reply(_edit('"hello "', '"hi "')), text_reply("Done."))
    done = await client.command("rhema.turn", {"prompt": "say hi", "worktree": True})
    session, tree = done["session"], done["worktree"]
    assert tree["branch"] == f"rhema/{session}" and tree["changed"] == ["hello.py"]
    assert tree["checkout"] == _real(repo)
    assert not Path(tree["path"]).is_relative_to(repo)
    assert (repo / "hello.py").read_text() == HELLO  # the checkout is untouched
    assert "hi " in _git(repo, "show", f"rhema/{session}:hello.py")

    fake.script(tool_reply(_edit('"hi "', '"hi, "')), text_reply("Again."))
    again = await client.command("rhema.turn", {"prompt": "rename", "session": session})
    assert again["worktree"]["branch"] == f"rhema/{session}"  # the session stays there
    assert (repo / "hello.py").read_text() == HELLO

    listed = await client.command("rhema.sessions", {})
    (summary,) = [s for s in listed if s["session"] == session]
    assert summary["worktree"]["changed"] == ["hello.py"] and summary["running"] is False

    diff = await client.command("rhema.worktreeDiff", {"session": session})
    (file,) = diff["files"]
    assert (file["path"], file["before"]) == ("hello.py", HELLO)
    assert file["after"] == HELLO.replace('"hello "', '"hi, "')

    (repo / "hello.py").write_text(HELLO.replace('"hello "', '"hey "'))  # the user's own edit
    conflicting = await client.command("rhema.worktreeApply", {"session": session})
    assert (conflicting["applied"], conflicting["conflicts"]) == ([], ["hello.py"])
    assert (repo / "hello.py").read_text() == HELLO.replace('"hello "', '"hey "')  # not clobbered

    (repo / "hello.py").write_text(HELLO)
    applied = await client.command("rhema.worktreeApply", {"session": session})
    assert (applied["applied"], applied["conflicts"]) == (["hello.py"], [])
    assert (repo / "hello.py").read_text() == file["after"]

    gone = await client.command("rhema.worktreeDiscard", {"session": session})
    assert gone["discarded"] and not _real(Path(tree["path"])).startswith("/")
    assert f"rhema/{session}" not in _git(repo, "branch", "--list")
    listed = await client.command("rhema.sessions", {})
    assert [s["worktree"] for s in listed if s["session"] == session] == [None]


async def test_hostile_worktree_requests_are_refused(
    client: Loopback, fake: FakeModelServer, repo: Path
) -> None:
    fake.script(text_reply("In the checkout."))
    plain = await client.command("rhema.turn", {"prompt": "hi"})
    assert plain["worktree"] is None
    with pytest.raises(RuntimeError, match="runs in the checkout"):
        await client.command(
            "rhema.turn", {"prompt": "again", "session": plain["session"], "worktree": True}
        )
    for command in ("rhema.worktreeDiff", "rhema.worktreeApply", "rhema.worktreeDiscard"):
        with pytest.raises(RuntimeError, match="has no worktree"):
            await client.command(command, {"session": plain["session"]})
        for name in ("../../etc", "0123456789abcdef"):
            with pytest.raises(RuntimeError, match="no session"):
                await client.command(command, {"session": name})
    assert _git(repo, "worktree", "list").count("\n") == 1


async def test_a_new_sessions_worktree_goes_when_its_run_never_starts(repo: Path) -> None:
    tree = await worktree_for(repo, "00aa11bb22cc33dd", new=True, wanted=True)
    assert tree is not None and _real(Path(tree.path))
    assert "rhema/00aa11bb22cc33dd" in _git(repo, "branch", "--list")
    await forget_new(None, tree)  # not a new session's: kept
    assert _real(Path(tree.path))
    await forget_new("00aa11bb22cc33dd", tree)
    assert not _real(Path(tree.path)) and _git(repo, "branch", "--list").count("rhema/") == 0
    assert _git(repo, "worktree", "list").count("\n") == 1
