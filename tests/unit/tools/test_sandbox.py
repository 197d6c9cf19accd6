"""``run_command`` in the bubblewrap sandbox, for real: a write in the
workspace runs without a question; a write outside, a home secret and a
connection to the host's loopback are denied, and the result says the
sandbox may have denied it; ``escalate`` asks, with the reason; ``off`` and
``require`` keep their meaning; and a hostile suite (symbolic links out,
``/proc/self/root``, a daemon, a fork bomb) leaves nothing outside touched
and no process behind."""

from __future__ import annotations

import os
import socket
import sys
import time
import uuid
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from rhema_lsp.tools import command_policy, sandbox
from rhema_lsp.tools.command_policy import CommandPolicy
from rhema_lsp.tools.process_limit import MAX_PROCESSES, RLIMIT_PREFIX, limit_note
from rhema_lsp.tools.sandbox import Availability, availability

from .conftest import SECRET, Bench, tree_digest

pytestmark = pytest.mark.process  # starts bwrap

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- FAKE-KEY-91c2"


@pytest.fixture
def sandboxed(bench: Bench) -> Bench:
    """The bench's tools in ``agent`` mode, sandboxed, no allow-list, and a
    fake home beside the workspace (visible in the sandbox: its parent is)
    with a private key and an ordinary file."""
    assert availability().available, availability().reason  # this machine has bwrap
    home = bench.base / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY + "\n")
    (home / "notes.txt").write_text("plain notes\n")
    bench.make("agent", commands=CommandPolicy("auto"), env={**os.environ, "HOME": str(home)})
    return bench


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and state[state.rfind(b")") + 2 :][:1] != b"Z":
            found.append(int(entry))
    return found


def _wait_gone(marker: str) -> list[int]:
    deadline = time.monotonic() + 10
    while (left := _processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


async def _none_left(marker: str) -> list[int]:
    """The processes still carrying ``marker`` once they had 10 s to go."""
    return await anyio.to_thread.run_sync(_wait_gone, marker)


async def test_a_write_in_the_workspace_runs_without_a_question(sandboxed: Bench) -> None:
    result = await sandboxed.call("run_command", command="echo made > made.txt && cat made.txt")
    assert not result.is_error, result.content
    assert result.content == "made\n[exit code 0]"
    assert (sandboxed.root / "made.txt").read_text() == "made\n"
    assert sandboxed.editor.asked == []


async def test_a_write_outside_fails_and_the_result_says_the_sandbox_denied_it(
    sandboxed: Bench,
) -> None:
    before = tree_digest(sandboxed.base / "outside")
    name = f"rhema-{uuid.uuid4().hex[:8]}"
    mine = f"/tmp/{name}"
    result = await sandboxed.call(
        "run_command", command=f"echo x > {mine} && cat {mine} && touch ../outside/new"
    )
    assert "Read-only file system" in result.content
    assert "escalate: true" in result.content  # the model is told how to ask
    assert "x\n" in result.content  # the private /tmp is writable
    assert tree_digest(sandboxed.base / "outside") == before
    assert name not in os.listdir("/tmp")  # the host's /tmp is not written
    assert sandboxed.editor.asked == []


async def test_home_secrets_are_masked_and_nothing_reaches_the_model(sandboxed: Bench) -> None:
    result = await sandboxed.call(
        "run_command", command="cat ~/notes.txt; cat ~/.ssh/id_rsa; ls -a ~/.ssh"
    )
    assert "plain notes" in result.content  # the home is there; the secret is not
    assert "FAKE-KEY" not in result.content
    assert "id_rsa: No such file or directory" in result.content


async def test_a_connection_to_the_hosts_loopback_is_not_made(sandboxed: Bench) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)"
        result = await sandboxed.call("run_command", command=f'{sys.executable} -c "{code}"')
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert result.is_error
    assert "Connection refused" in result.content and "escalate: true" in result.content


async def test_escalating_asks_with_the_reason_and_runs_outside(sandboxed: Bench) -> None:
    sandboxed.editor.answer = "Run"
    result = await sandboxed.call(
        "run_command",
        command="touch ../outside/escalated",
        escalate=True,
        reason="it writes the build output next to the project",
    )
    assert not result.is_error, result.content
    [(question, choices)] = sandboxed.editor.asked
    assert "outside the sandbox" in question and "build output" in question
    assert choices == ("Deny", "Run")
    assert (sandboxed.base / "outside" / "escalated").exists()


async def test_with_the_sandbox_off_the_old_approval_applies(bench: Bench) -> None:
    bench.make("agent", commands=CommandPolicy("off"))
    bench.editor.answer = "Deny"
    result = await bench.call("run_command", command="touch ran")
    assert result.is_error and "did not approve" in result.content
    assert "the sandbox is off" in bench.editor.asked[0][0]
    assert not (bench.root / "ran").exists()
    bench.make("agent", commands=CommandPolicy("off"), command_allowlist=["touch"])
    assert not (await bench.call("run_command", command="touch ran")).is_error
    assert (bench.root / "ran").exists()  # the allow-list keeps its meaning


async def test_require_without_a_sandbox_refuses_and_auto_asks(
    bench: Bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    none = Availability("none", None, "bubblewrap is not installed")
    monkeypatch.setattr(command_policy, "availability", lambda: none)
    bench.make("agent", commands=CommandPolicy("require"), command_allowlist=["touch"])
    result = await bench.call("run_command", command="touch ran")
    assert result.is_error and "sandbox: require" in result.content
    assert "bubblewrap is not installed" in result.content
    assert not (bench.root / "ran").exists() and bench.editor.asked == []
    bench.make("agent", commands=CommandPolicy("auto"))
    bench.editor.answer = "Deny"
    await bench.call("run_command", command="touch ran")
    assert "there is no sandbox here: bubblewrap is not installed" in bench.editor.asked[0][0]
    assert CommandPolicy("auto").status().startswith("sandbox: none — bubblewrap")


def test_the_status_line_says_what_sandboxes() -> None:
    assert CommandPolicy("auto").status().startswith("sandbox: bubblewrap (")
    assert "no network" in CommandPolicy("auto").status()
    assert "network allowed" in CommandPolicy("auto", network=True).status()
    assert CommandPolicy("off").status().startswith("sandbox: off")


# -- hostile ----------------------------------------------------------------


async def test_symlinks_out_of_the_workspace_lead_nowhere(sandboxed: Bench) -> None:
    before = tree_digest(sandboxed.base / "outside")
    (sandboxed.root / "out").symlink_to(sandboxed.base / "outside")
    (sandboxed.root / "keys").symlink_to(sandboxed.base / "home" / ".ssh")
    result = await sandboxed.call(
        "run_command",
        command="echo pwned > out/secret.txt; echo pwned > out/planted; cat keys/id_rsa",
    )
    assert result.content.count("Read-only file system") == 2
    assert "FAKE-KEY" not in result.content
    assert tree_digest(sandboxed.base / "outside") == before


async def test_proc_self_root_is_the_sandboxs_own_root(sandboxed: Bench) -> None:
    before = tree_digest(sandboxed.base / "outside")
    home = sandboxed.base / "home"
    result = await sandboxed.call(
        "run_command",
        command=(
            f"echo pwned > /proc/self/root{sandboxed.base}/outside/planted; "
            f"cat /proc/self/root{home}/.ssh/id_rsa; cat /proc/1/root{home}/.ssh/id_rsa"
        ),
    )
    assert "Read-only file system" in result.content
    assert "FAKE-KEY" not in result.content
    assert SECRET not in result.content
    assert tree_digest(sandboxed.base / "outside") == before


async def test_a_daemon_does_not_outlive_the_command(sandboxed: Bench) -> None:
    marker = f"rhema-daemon-{uuid.uuid4().hex[:8]}"
    result = await sandboxed.call(
        "run_command",
        command=(
            f"(setsid sh -c 'while :; do sleep 1; done # {marker}' </dev/null >/dev/null 2>&1 &); "
            "echo detached"
        ),
    )
    assert result.content == "detached\n[exit code 0]"
    assert await _none_left(marker) == []


async def test_a_fork_bomb_stops_at_the_limit_and_leaves_nothing(sandboxed: Bench) -> None:
    # enforced (as root, where the kernel ignores the rlimit, by a pids cgroup):
    # never set a bomb off on a shared machine without it
    assert limit_note().startswith(f"at most {MAX_PROCESSES} processes"), limit_note()
    marker = f"bomb{uuid.uuid4().hex[:8]}"
    bomb = f"{marker}() {{ {marker} | {marker} & }}; {marker}; wait"
    result = await sandboxed.call("run_command", command=bomb, timeout_s=2)
    assert "timed out" in result.content or result.code is not None
    assert await _none_left(marker) == []
    assert await _none_left(str(sandboxed.root)) == []  # nothing started in the workspace


def test_a_server_not_running_as_root_limits_processes_by_rlimit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "pids_cgroup", lambda: None)
    argv = sandbox.Sandbox("/usr/bin/bwrap").wrap(["true"], roots=[], cwd=None, env={})
    assert argv[0] == "/usr/bin/bwrap"
    assert argv[argv.index("--") + 1 :] == [*RLIMIT_PREFIX, "true"]
    shell = sandbox.Sandbox("/usr/bin/bwrap").wrap(
        ["/bin/sh", "-c", "echo hi"], roots=[], cwd=None, env={}
    )
    limit = f"ulimit -u {MAX_PROCESSES} 2>/dev/null || ulimit -p {MAX_PROCESSES} 2>/dev/null"
    assert shell[shell.index("--") + 1 :] == ["/bin/sh", "-c", f"{limit}\necho hi"]
