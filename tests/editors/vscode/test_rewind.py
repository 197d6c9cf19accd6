"""Rewind in real VS Code (code-server): a turn edits three files, the server is killed
(the client starts a new one), and "Rhema: Rewind…" restores the files exactly from the
store's checkpoints, saved as they were, leaving the one the user changed since alone
(reported in the channel); the chat is drawn again without the turn taken back (its
prompt, answer and changed-files card with their Accept/Reject gone) and says so. Then,
in the same editor, a session in its own worktree: "Rhema: Ask in a Worktree…" leaves the
checkout as it is, "Rhema: Worktrees…" lists it, opens its diff and applies it."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.editors.vscode.conftest import VSCode
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

CHAT = {"in": "chat"}

pytestmark = pytest.mark.timeout(900)

ORIGINAL = {"a.py": "a = 1\n", "b.py": "b = 2\n", "c.py": "c = 3\n"}
EDITED = {"a.py": "a = 10\n", "b.py": "b = 20\n", "c.py": "c = 30\n"}
USER_LINE = "# the user's line\n"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
COMMIT = (["init", "-q"], ["add", "a.py", "b.py", "c.py"], ["commit", "-qm", "init"])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


KILL = (
    "import sys; from pathlib import Path; "
    "from tests.editors.vscode.test_rewind import kill_servers; "
    "print(kill_servers(Path(sys.argv[1])))"
)


def kill_servers(workspace: Path) -> int:
    """SIGKILL every rhema-lsp server this test's code-server started (they run with the
    workspace's code-server as an ancestor; matched by the store they opened)."""
    listing = subprocess.run(
        ["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=True
    ).stdout
    killed = 0
    for line in listing.splitlines():
        pid, _, args = line.strip().partition(" ")
        if "rhema_lsp serve" not in args:
            continue
        try:
            if os.readlink(f"/proc/{pid}/cwd") != str(workspace) and not _holds_store(
                int(pid), workspace
            ):
                continue
            os.kill(int(pid), signal.SIGKILL)
            killed += 1
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return killed


def _holds_store(pid: int, workspace: Path) -> bool:
    store = str(workspace / ".rhema" / "sessions.sqlite3")
    try:
        return any(
            os.readlink(f"/proc/{pid}/fd/{fd}").startswith(store)
            for fd in os.listdir(f"/proc/{pid}/fd")
        )
    except OSError:
        return False


@pytest.mark.parametrize("extra_settings", [{"files.autoSave": "off"}])
def test_rewind_after_a_killed_server_restores_the_files_and_spares_the_users(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    ws = vscode.workspace
    for name, text in ORIGINAL.items():
        (ws / name).write_text(text)
    before = {name: digest(ws / name) for name in ORIGINAL}
    model.script(
        tool_reply(
            *[
                ("edit_file", {"path": name, "old_text": ORIGINAL[name], "new_text": new})
                for name, new in EDITED.items()
            ]
        ),
        text_reply("Changed three files."),
        tool_reply(("edit_file", {"path": "a.py", "old_text": "a = 1", "new_text": "a = 11"})),
        text_reply("Made a eleven."),
    )
    shot = artifacts / "rewind-picker.png"
    kill = [sys.executable, "-c", KILL, str(ws)]
    steps = vscode.drive(
        [
            {"command": "Rhema: Ask"},
            {"input": "Change a, b and c", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "Changed three files."},
            # VS Code opens the files a workspace edit dirtied in editors (800 ms later), and
            # "Save All Files" saves open editors only: the user saves what they see.
            *[{"waitFor": ".tab.dirty", "hasText": name} for name in EDITED],
            {"command": "File: Save All Files"},
            *[{"waitFile": str(ws / name), "equals": text} for name, text in EDITED.items()],
            # The chat shows the turn and its changed files.
            {"command": "Rhema: Open Chat"},
            {"waitFor": ".changes button", "hasText": "Reject", **CHAT},
            {"query": "#transcript > *", **CHAT},
            # The server dies (SIGKILL); the client starts a new one.
            {"exec": kill},
            # The user changes c.py (unsaved).
            {"openFile": "c.py"},
            {"press": "Control+End"},
            {"typeText": USER_LINE},
            {"command": "Rhema: Rewind…"},
            {"waitFor": ".quick-input-widget .monaco-list-row", "hasText": "Turn 1"},
            {"screenshot": str(shot)},
            {"input": "Turn 1", "title": "Rhema: Rewind"},
            {"input": "Code and conversation", "title": "Rhema: Take Back Turn 1"},
            {"waitLog": "Rhema", "contains": "↶ Rewind to before turn 1"},
            # (the file left alone is the next line, written a moment later)
            {"waitLog": "Rhema", "contains": "c.py: changed since turn 1 left it"},
            {"waitFile": str(ws / "a.py"), "equals": ORIGINAL["a.py"]},
            {"waitFile": str(ws / "b.py"), "equals": ORIGINAL["b.py"]},
            {"openFile": "c.py"},
            {"command": "File: Save"},
            {"waitFile": str(ws / "c.py"), "equals": EDITED["c.py"] + USER_LINE},
            # Then the chat, drawn again (last: from the chat's focus the
            # workbench's quick open did not always come up).
            {"command": "Rhema: Open Chat"},
            {"waitFor": ".notice", "hasText": "Rewound to before turn 1", **CHAT},
            {"query": "#transcript > *", **CHAT},
            # A session in its own worktree: listed, its diff opened, applied.
            *[{"exec": [*GIT, "-C", str(ws), *args]} for args in COMMIT],
            {"command": "Rhema: Ask in a Worktree…"},
            {"input": "Make a eleven", "title": "Rhema: Ask in a Worktree"},
            {"waitLog": "Rhema", "contains": "⎇ Worktree rhema/"},
            {"waitFile": str(ws / "a.py"), "equals": ORIGINAL["a.py"]},
            {"command": "Rhema: Worktrees…"},
            {"input": "Make a eleven", "title": "Rhema: Worktrees"},
            {"input": "Review Changes", "title": "Rhema: rhema/"},
            {"waitLog": "Rhema", "contains": "⎇ Review rhema/"},
            {"waitFor": ".tab", "hasText": "a.py (rhema/"},
            {"command": "Rhema: Worktrees…"},
            {"input": "Make a eleven", "title": "Rhema: Worktrees"},
            {"input": "Apply to Checkout", "title": "Rhema: rhema/"},
            {"waitLog": "Rhema", "contains": "⎇ Applied rhema/"},
            {"waitFile": str(ws / "a.py"), "equals": "a = 11\n"},
        ],
        timeout_s=90,
    )
    assert int(next(s["stdout"] for s in steps if "exec" in s)) >= 1  # a server was killed
    (text,) = [step["text"] for step in steps if step.get("waitLog")][-1:]
    assert (
        "↶ Rewind to before turn 1: 2 file(s) restored (2 saved), 1 left alone,"
        " conversation kept to 0 message(s)\n" in text
    )
    assert "  c.py: changed since turn 1 left it; not restored (force overwrites it)\n" in text
    # a.py was restored (the waitFile step), then the worktree's change applied over it
    assert (ws / "a.py").read_text() == "a = 11\n"
    assert digest(ws / "b.py") == before["b.py"]
    saved = [step for step in steps if step.get("waitFile") == str(ws / "c.py")][-1]
    assert saved["text"] == EDITED["c.py"] + USER_LINE  # the user's edit survived
    assert shot.stat().st_size > 0
    assert len(model.requests) == 4  # rewinding asks nothing of the model
    before_rewind, after_rewind = [step["elements"] for step in steps if "query" in step]
    assert [e["data"]["kind"] for e in before_rewind][:1] == ["user"]
    assert "changes" in [e["data"]["kind"] for e in before_rewind]
    # Drawn again: the turn taken back is gone, with its card; one line says what went back.
    assert [e["data"]["kind"] for e in after_rewind] == ["notice"]
    worktree = [step["text"] for step in steps if step.get("waitLog")][-1]
    assert "⎇ Review rhema/" in worktree and ": a.py\n" in worktree
    assert "⎇ Applied rhema/" in worktree
    assert after_rewind[0]["text"] == (
        "↶ Rewound to before turn 1: 2 files restored, 1 changed since left as they are,"
        " turn 1 and after taken out of the conversation."
    )
