"""The command sandbox as a new user meets it: ``rhema-lsp ask --mode agent``
with no ``--yes`` and no allow-list, the real server and real bubblewrap.
A command writing in the workspace runs without a question; ``touch
../outside``, a private key in a (fake) home and a connection to a listener
on the host's ``127.0.0.1`` are all denied, and nothing of the key reaches
the model; ``rhema-lsp status`` says what sandboxes. With ``--sandbox off``
the old approval applies (no terminal to ask: declined, nothing runs)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.e2e.test_cli import ENTRY, ask_command
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

KEY = "FAKE-PRIVATE-KEY-3b7e"


def _run(command: list[str], tmp_path: Path, home: Path) -> tuple[int, str, str]:
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY + "\n")
    return home


def test_agent_mode_runs_sandboxed_commands_without_asking_and_denies_the_rest(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    home = _home(tmp_path)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)"
        fake.script(
            tool_reply(
                ("run_command", {"command": "echo made > made.txt"}),
                ("run_command", {"command": "touch ../outside"}),
                ("run_command", {"command": "cat ~/.ssh/id_rsa"}),
                ("run_command", {"command": f'{sys.executable} -c "{connect}"'}),
            ),
            text_reply("Done."),
        )
        code, _out, err = _run(
            ask_command(fake, workspace, "--mode", "agent", "try these"), tmp_path, home
        )
        try:
            listener.accept()
            connected = True
        except BlockingIOError:
            connected = False
    assert code == 0, err
    assert "Enter declines" not in err and "no terminal to ask" not in err  # nothing asked
    assert (workspace / "made.txt").read_text() == "made\n"
    assert not (tmp_path / "outside").exists()
    assert not connected
    sent = json.dumps(fake.requests)
    assert KEY not in sent and KEY not in err
    results = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert results[0] == "[exit code 0]"
    assert "Read-only file system" in results[1] and "escalate: true" in results[1]
    assert "No such file or directory" in results[2]
    assert "Connection refused" in results[3]

    code, out, err = _run([*ENTRY, "status", "--folder", str(workspace)], tmp_path, home)
    assert "sandbox:  bubblewrap (" in out, out + err


def test_with_the_sandbox_off_the_old_approval_applies(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    fake.script(tool_reply(("run_command", {"command": "touch ran.txt"})), text_reply("Not run."))
    code, _out, err = _run(
        ask_command(fake, workspace, "--mode", "agent", "--sandbox", "off", "run it"),
        tmp_path,
        _home(tmp_path),
    )
    assert code == 0, err
    assert "the sandbox is off" in err and "no terminal to ask" in err
    assert not (workspace / "ran.txt").exists()
    result = next(m for m in fake.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert "did not approve" in result
