"""``rhema-lsp ask --worktree`` as a user runs it, on a real repository: the
turn runs in a new worktree (HEAD plus the uncommitted changes) on branch
``rhema/NAME`` under the state directory, the checkout is untouched, the
branch holds the change, ``worktree apply`` merges it in (a conflicting
local edit is reported, nothing written), ``discard`` removes worktree and
branch; two worktree turns run at once on one repository; a bad name is
refused."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_cli import ENTRY, ask_command, run
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

HELLO = 'def greet(name):\n    return "hello " + name\n'


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
def repo(workspace: Path) -> Path:
    _git(workspace, "init", "-q")
    _git(workspace, "add", "hello.py")
    _git(workspace, "commit", "-qm", "init")
    (workspace / "notes.txt").write_text("draft, not committed\n")
    return workspace


def _edit(old: str, new: str) -> tuple[str, dict[str, object]]:
    return ("edit_file", {"path": "hello.py", "old_text": old, "new_text": new})


def _name(stderr: str) -> str:
    found = re.search(r"worktree: (\S+) on branch rhema/\1 at ", stderr)
    assert found, stderr
    return found.group(1)


def test_a_worktree_turn_leaves_the_checkout_and_apply_then_discard_finish_it(
    fake: FakeModelServer, repo: Path, tmp_path: Path
) -> None:
    fake.script(
        tool_reply(
            _edit('"hello "', '"hi "'),
            ("run_command", {"command": "cat notes.txt > seen.txt"}),  # sandboxed, in the worktree
        ),
        text_reply("Done."),
    )
    done = run(ask_command(fake, repo, "--mode", "agent", "--worktree", "say hi"), tmp_path)
    assert done.returncode == 0, done.stderr
    name = _name(done.stderr)
    assert (repo / "hello.py").read_text() == HELLO  # the checkout is untouched
    assert not (repo / "seen.txt").exists() and not (repo / ".rhema").exists()
    assert '"hi "' in _git(repo, "show", f"rhema/{name}:hello.py")
    assert _git(repo, "show", f"rhema/{name}:seen.txt") == "draft, not committed\n"
    assert str(tmp_path / "state") in done.stderr  # under the state directory

    listed = run([*ENTRY, "worktrees", "--folder", str(repo)], tmp_path)
    assert f"{name}  rhema/{name}  2 file(s) changed" in listed.stdout, listed.stdout

    applied = run([*ENTRY, "worktree", "apply", name, "--folder", str(repo)], tmp_path)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert (repo / "hello.py").read_text() == HELLO.replace('"hello "', '"hi "')
    assert (repo / "seen.txt").read_text() == "draft, not committed\n"

    discarded = run([*ENTRY, "worktree", "discard", name, "--folder", str(repo)], tmp_path)
    assert discarded.returncode == 0, discarded.stderr
    assert f"rhema/{name}" not in _git(repo, "branch", "--list")
    assert _git(repo, "worktree", "list").count("\n") == 1
    assert "no worktrees" in run([*ENTRY, "worktrees", "--folder", str(repo)], tmp_path).stdout


def test_a_conflicting_local_edit_is_reported_and_nothing_is_written(
    fake: FakeModelServer, repo: Path, tmp_path: Path
) -> None:
    fake.script(tool_reply(_edit('"hello "', '"hi "')), text_reply("Done."))
    done = run(ask_command(fake, repo, "--mode", "edit", "--worktree", "say hi"), tmp_path)
    assert done.returncode == 0, done.stderr
    name = _name(done.stderr)
    mine = HELLO.replace('"hello "', '"hey "')
    (repo / "hello.py").write_text(mine)  # the user typed on meanwhile
    applied = run([*ENTRY, "worktree", "apply", name, "--folder", str(repo)], tmp_path)
    assert applied.returncode == 1
    assert "conflict" in applied.stdout and "hello.py" in applied.stdout
    assert (repo / "hello.py").read_text() == mine  # never clobbered


def test_two_worktree_turns_run_at_once_on_one_repository(
    fake: FakeModelServer, repo: Path, tmp_path: Path
) -> None:
    with FakeModelServer(wire="openai") as other:
        fake.script(tool_reply(_edit('"hello "', '"one "')), text_reply("One."))
        other.script(tool_reply(_edit('"hello "', '"two "')), text_reply("Two."))
        env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
        running = [
            subprocess.Popen(
                ask_command(model, repo, "--mode", "edit", "--worktree", "go"),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                env=env,
            )
            for model in (fake, other)
        ]
        ended = [process.communicate(timeout=120) for process in running]
    assert [process.returncode for process in running] == [0, 0], ended
    names = [_name(err) for _out, err in ended]
    assert len(set(names)) == 2
    shown = {_git(repo, "show", f"rhema/{name}:hello.py") for name in names}
    assert shown == {HELLO.replace('"hello "', f'"{word} "') for word in ("one", "two")}
    assert (repo / "hello.py").read_text() == HELLO


@pytest.mark.parametrize("name", ["../../etc", "rhema/x", "20991231-000000-abcdef"])
def test_a_bad_worktree_name_is_refused(repo: Path, tmp_path: Path, name: str) -> None:
    done = run([*ENTRY, "worktree", "discard", name, "--folder", str(repo)], tmp_path)
    assert done.returncode == 2
    assert "worktree" in done.stderr and "rhema-lsp worktrees" in done.stderr
