"""Ctrl-C in a real terminal: ``rhema-lsp ask`` runs on a pseudo-terminal as
its controlling terminal, and the test types ``^C``, so the line discipline
sends SIGINT to the whole foreground process group, exactly as a terminal
does. The server must not get it (it runs in a session of its own); the
client cancels the turn, prints a clean closing line, exits 130, and leaves
no child behind."""

from __future__ import annotations

import os
import pty
import re
import select
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e.test_cli import ask_command
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
WAIT = 60.0
"""Seconds any one expected piece of output may take (a bound, not a measurement)."""


@dataclass
class Terminal:
    """A child process on a pty, and what it wrote there."""

    pid: int
    fd: int
    marker: str
    output: bytearray = field(default_factory=bytearray)
    status: int | None = None

    def text(self) -> str:
        return ANSI.sub("", self.output.decode("utf-8", "replace")).replace("\r", "")

    def read_until(self, needle: str) -> None:
        while needle not in self.text():
            ready, _, _ = select.select([self.fd], [], [], WAIT)
            assert ready, f"no {needle!r} within {WAIT} s; so far: {self.text()[-2000:]}"
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                chunk = b""
            assert chunk, f"the terminal closed before {needle!r}: {self.text()[-2000:]}"
            self.output += chunk

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def wait(self) -> int:
        while True:
            ready, _, _ = select.select([self.fd], [], [], WAIT)
            assert ready, f"still running after {WAIT} s: {self.text()[-2000:]}"
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            self.output += chunk
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def strays(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker`` (unique to one test)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ.split(b"\0") and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


@pytest.fixture
def flags(request: pytest.FixtureRequest) -> list[str]:
    """Extra flags of ``ask``: none, unless a test names them (indirect)."""
    return list(getattr(request, "param", []))


@pytest.fixture
def terminal(
    fake: FakeModelServer, workspace: Path, tmp_path: Path, flags: list[str]
) -> Iterator[Terminal]:
    command = ask_command(fake, workspace, "--no-thinking", *flags, "tell me a long story")
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "TERM": "xterm"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: exec at once (the parent has threads)
        os.execve(sys.executable, command, env)
    term = Terminal(pid, fd, marker=f"XDG_STATE_HOME={tmp_path / 'state'}")
    try:
        yield term
    finally:
        try:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass  # it exited, as it should
        os.close(fd)


def server_of(term: Terminal) -> int:
    servers = children_of(term.pid)
    assert len(servers) == 1, servers
    return servers[0]


def test_ctrl_c_cancels_the_turn_and_exits_130(fake: FakeModelServer, terminal: Terminal) -> None:
    fake.script(text_reply("word " * 5000, chunk=5, delay=0.01))
    terminal.read_until("word word word ")
    server = server_of(terminal)
    assert os.tcgetpgrp(terminal.fd) == terminal.pid  # the client is the foreground group
    terminal.type(b"\x03")  # the terminal sends SIGINT to the foreground process group
    code = terminal.wait()
    text = terminal.text()
    assert code == 130, text[-2000:]
    assert "cancelling…" in text
    assert re.search(r"^— cancelled · 1 step\(s\) · \d+ in / \d+ out tokens$", text, re.M), text
    assert "Request with id" not in text and "Unknown child process" not in text
    assert "Traceback" not in text
    assert not alive(server)
    assert strays(terminal.marker) == []


def test_a_second_ctrl_c_stops_the_server_too(fake: FakeModelServer, terminal: Terminal) -> None:
    fake.script(text_reply("word " * 5000, chunk=5, delay=0.01))
    terminal.read_until("word word word ")
    server = server_of(terminal)
    terminal.type(b"\x03\x03")
    code = terminal.wait()
    text = terminal.text()
    assert code == 130, text[-2000:]
    closing = [line for line in text.splitlines() if line.startswith("— ")]
    assert closing and closing[-1].startswith(("— cancelled", "— stopped")), text[-2000:]
    assert "Traceback" not in text
    assert not alive(server)
    assert strays(terminal.marker) == []


def test_ctrl_c_while_the_server_starts(fake: FakeModelServer, terminal: Terminal) -> None:
    fake.script(text_reply("never sent"))
    terminal.read_until("provider: custom")
    terminal.type(b"\x03")
    code = terminal.wait()
    text = terminal.text()
    assert code == 130, text[-2000:]
    assert "Traceback" not in text
    assert strays(terminal.marker) == []


@pytest.mark.parametrize("flags", [["--mode", "agent"]], indirect=True)
def test_ctrl_c_at_a_confirmation_question(
    fake: FakeModelServer, terminal: Terminal, flags: list[str]
) -> None:
    fake.script(
        tool_reply(("run_command", {"command": "echo hi", "escalate": True})),
        text_reply("not reached"),
    )
    terminal.read_until("(Enter declines)")
    terminal.type(b"\x03")
    code = terminal.wait()
    text = terminal.text()
    assert code == 130, text[-2000:]
    assert re.search(r"^— cancelled · ", text, re.M), text[-2000:]
    assert "Traceback" not in text
    assert strays(terminal.marker) == []
