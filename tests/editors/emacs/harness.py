"""Run real Emacs with a plain LSP client (eglot or lsp-mode), in a terminal,
against the real server.

``run_emacs(body, ..., client=...)`` starts ``emacs -nw -q`` (Debian's
``emacs-nox`` with ``elpa-eglot`` or ``elpa-lsp-mode``, no init file, no rhema
code) on a pseudo-terminal, as a fresh user would run it: the command loop
runs, so eglot's idle timer sends ``didChange`` when the user stops typing,
and key presses arrive as terminal input. Batch mode cannot stand in for
that: ``emacs --batch`` never runs idle timers, so no ``didChange`` would
ever leave while the test waits.

Emacs loads ``prelude.el`` (the ``T-`` helpers), the client's file
(``eglot.el`` or ``lsp-mode.el``: the client configured as the README's
recipe says, and its side of the helpers), then the test body, a
``(T-run STEP...)`` form. Steps run one after another from timers, returning
to the command loop in between, the way a user's commands do.
``(T-keys "...")`` asks this harness to type raw bytes on the terminal
(``"\\C-g"`` is a real C-g). The body fills ``T-result``; it comes back as
a dict, with ``messages`` (the ``*Messages*`` buffer) always in it. A failed
step fails the test with the messages, the tail of the client's log
buffers and of the terminal attached.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
PRELUDE = Path(__file__).with_name("prelude.el")
CLIENTS = {"eglot": "elpa-eglot", "lsp-mode": "elpa-lsp-mode"}
"""The clients the tests run, and the Debian package of each."""


class EmacsTestError(AssertionError):
    """A step failed, or Emacs did not finish."""


def emacs_binary() -> str:
    """Emacs from ``PATH`` (``scripts/test.sh`` installs Debian's ``emacs-nox``)."""
    found = shutil.which("emacs")
    if found is None:
        raise RuntimeError(
            "emacs not found: scripts/install.sh installs emacs-nox, elpa-eglot and elpa-lsp-mode"
        )
    return found


class _Terminal:
    """The pseudo-terminal Emacs runs on: drains its output, types requested keys."""

    def __init__(self, master: int, keys_dir: Path) -> None:
        self.master = master
        self.keys_dir = keys_dir
        self.output = bytearray()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        import select

        while not self.stopped.is_set():
            readable, _, _ = select.select([self.master], [], [], 0.05)
            if readable:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # Emacs closed the terminal
                    return
                if not chunk:
                    return
                self.output += chunk
                del self.output[:-200_000]
            for request in sorted(self.keys_dir.iterdir()):
                if request.suffix == ".tmp":
                    continue
                os.write(self.master, request.read_bytes())
                request.unlink()

    def screen_tail(self) -> str:
        """The terminal's last output, control sequences made harmless."""
        text = self.output[-4000:].decode("utf-8", errors="replace")
        return text.replace("\x1b", "^[")


def run_emacs(
    body: str,
    *,
    workspace: Path,
    tmp_path: Path,
    settings: dict[str, Any],
    timeout: float = 120,
    client: str = "eglot",
) -> dict[str, Any]:
    """Run ``body`` (Emacs Lisp: a ``(T-run ...)`` form) and return ``T-result``.

    Parameters
    ----------
    body
        The test's steps; they may use the ``T-`` helpers of ``prelude.el``.
    workspace
        The workspace folder (``T-workspace``); Emacs starts in it.
    tmp_path
        Where the body, the result, the key requests and the home folder go.
    settings
        The ``initializationOptions`` the client sends.
    timeout
        A guard against a hung Emacs; the steps' own waits are shorter.
    client
        ``eglot`` or ``lsp-mode`` (a key of :data:`CLIENTS`).
    """
    client_file = Path(__file__).with_name(f"{client}.el")
    if client not in CLIENTS:
        raise ValueError(f"unknown Emacs client {client!r}: one of {sorted(CLIENTS)}")
    run_dir = tmp_path / "emacs"
    keys_dir = run_dir / "keys"
    keys_dir.mkdir(parents=True, exist_ok=True)
    script = run_dir / "body.el"
    script.write_text(";;; -*- lexical-binding: t -*-\n" + body, encoding="utf-8")
    out = run_dir / "result.json"
    out.unlink(missing_ok=True)
    spec = {
        "workspace": str(workspace),
        "dir": str(run_dir),
        "command": [sys.executable, "-m", "rhema_lsp", "serve"],
        "initializationOptions": settings,
    }
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = dict(
        os.environ,
        HOME=str(home),
        TERM="xterm-256color",
        RHEMA_TEST_SPEC=json.dumps(spec),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
        OPENAI_API_KEY="",
        PYTHONPATH=str(REPO),
    )
    command = [emacs_binary(), "-nw", "-q", "-l", str(PRELUDE), "-l", str(client_file)]
    command += ["-l", str(script)]
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        command,
        cwd=workspace,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        preexec_fn=controlling_terminal,
    )
    os.close(slave)
    terminal = _Terminal(master, keys_dir)
    terminal.thread.start()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        os.killpg(process.pid, 9)
        process.wait()
        written = "written" if out.exists() else "not written"
        raise EmacsTestError(
            f"Emacs did not finish in {timeout}s (result {written}); steps begun:\n"
            f"{_tail(run_dir / 'steps.log', 1500)}\nterminal:\n{terminal.screen_tail()}"
            f"\nevents:\n{_tail(run_dir / 'events.log')}"
        ) from exc
    finally:
        terminal.stopped.set()
        terminal.thread.join(timeout=5)
        os.close(master)
    if not out.exists():
        raise EmacsTestError(
            f"Emacs exited {process.returncode} without a result; "
            f"terminal:\n{terminal.screen_tail()}"
        )
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if result.get("error"):
        raise EmacsTestError(
            f"{result['error']}\n*Messages*:\n{result.get('messages')}"
            f"\n{client}'s log (tail):\n{_tail(run_dir / 'events.log')}"
        )
    return result


def _tail(path: Path, size: int = 6000) -> str:
    if not path.exists():
        return "(none)"
    return path.read_text(encoding="utf-8", errors="replace")[-size:]


SHOWN = "[eglot] Server reports (type=3): "
LSP_MODE_SHOWN = "LSP :: "


def shown(messages: str, client: str = "eglot") -> list[str]:
    """The Info messages (``window/showMessage`` type 3) the client logged in
    ``*Messages*``: eglot's ``[eglot] Server reports (type=3): …`` (up to its
    next line of its own), lsp-mode's ``LSP :: …`` lines (the server's
    messages are one line each)."""
    if client == "lsp-mode":
        return [
            line.removeprefix(LSP_MODE_SHOWN)
            for line in messages.splitlines()
            if line.startswith(LSP_MODE_SHOWN + "Rhema: ")
        ]
    return [part.split("\n[eglot] ")[0] for part in messages.split(SHOWN)[1:]]


def transcript(workspace: Path, session: str) -> Path:
    """Where the server keeps a session's transcript (the default session store)."""
    return workspace / ".rhema" / "transcripts" / f"{session}.md"
