"""Fixtures for the VS Code end-to-end tests: real code-server, real extension, real server,
headless Chromium, and a scripted model.

The extension starts the real language server, ``python -m rhema_lsp serve`` with this
interpreter (``RHEMA_VSCODE_SERVER_COMMAND``, a JSON list or a shell-style string, replaces
it, e.g. to test an installed ``rhema-lsp``). The server's model is a
:class:`~tests.fakes.model_server.FakeModelServer` (OpenAI wire) serving from a thread of
the pytest process on 127.0.0.1: the ``model`` fixture, which each test scripts and whose
``requests`` it inspects. VS Code's user settings point the server at it
(``rhema.provider: custom``, ``rhema.protocol: openai``, ``rhema.baseUrl``,
``rhema.model: fake-model``, ``rhema.mode: edit``).

code-server is installed once per machine by ``scripts/install-code-server.sh`` (cached
under ``$HOME/.cache/rhema-lsp/code-server`` or ``RHEMA_CODE_SERVER_DIR``); the extension is
packaged and installed once per session (each test gets a copy of the installed extensions
folder); every test gets a fresh code-server with fresh XDG dirs (the
server's ``XDG_STATE_HOME`` included) and no API keys in its environment, started in its own
process group and killed as a group.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model_server import FakeModelServer

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
EXTENSION_DIR = REPO / "editors" / "vscode"
DRIVER_DIR = HERE / "driver"
INSTALL_SCRIPT = REPO / "scripts" / "install-code-server.sh"
ARTIFACTS = REPO / "test-artifacts" / "vscode"
EXTENSION_ID = "rhema-lsp.rhema"
STARTUP_TIMEOUT_S = 90.0
FAKE_MODEL = "fake-model"
# Nothing from the developer's environment may choose another provider or leak a key.
PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "RHEMA_API_KEY",
    "RHEMA_KEY_ORIGINS",
)


def _run(cmd: list[str], cwd: Path, timeout: float = 600) -> str:
    proc = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"{shlex.join(cmd)} failed ({proc.returncode}) in {cwd}:\n{proc.stdout}\n{proc.stderr}"
        )
    return proc.stdout


def _npm_ci_if_needed(folder: Path) -> None:
    """``npm ci`` in ``folder`` unless its ``node_modules`` was installed from
    this very lock file: the stamp ``scripts/install.sh`` keeps (a copy of the
    lock), never a file time (a fresh checkout's times say nothing about what
    is installed, and a worktree's linked ``node_modules`` must not be redone)."""
    lock = (folder / "package-lock.json").read_bytes()
    stamp = folder / "node_modules" / ".rhema-lock"
    if stamp.exists() and stamp.read_bytes() == lock:
        return
    _run(["npm", "ci", "--no-audit", "--no-fund"], folder)
    stamp.write_bytes(lock)


@pytest.fixture(scope="session")
def code_server() -> Path:
    """Path of the code-server launcher, installed (and cached) by the install script."""
    out = _run(["bash", str(INSTALL_SCRIPT)], REPO, timeout=1200)
    return Path(out.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def vsix() -> Path:
    """The extension, built and packaged from the working tree."""
    _npm_ci_if_needed(EXTENSION_DIR)
    _run(["npm", "run", "package"], EXTENSION_DIR)
    return EXTENSION_DIR / "rhema.vsix"


@pytest.fixture(scope="session")
def installed_extensions(
    code_server: Path, vsix: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """An extensions folder with the packaged extension installed, once per session: each
    test starts from a copy of it (installing takes code-server seconds a test)."""
    root = tmp_path_factory.mktemp("installed")
    folder = root / "extensions"
    _run(
        [
            str(code_server),
            "--user-data-dir",
            str(root / "user-data"),
            "--extensions-dir",
            str(folder),
            "--install-extension",
            str(vsix),
        ],
        root,
    )
    return folder


def _copy_extensions(installed: Path, to: Path) -> None:
    """A test's own copy of ``installed``; its index names the copy's paths."""
    shutil.copytree(installed, to, symlinks=True)
    index = to / "extensions.json"
    if index.exists():
        index.write_text(index.read_text().replace(str(installed), str(to)))


@pytest.fixture(scope="session")
def driver() -> Path:
    """The playwright-core driver script, with its dependencies installed."""
    _npm_ci_if_needed(DRIVER_DIR)
    return DRIVER_DIR / "drive.mjs"


@pytest.fixture(scope="session")
def server_command() -> list[str]:
    """The language server command line the extension is configured to start."""
    configured = os.environ.get("RHEMA_VSCODE_SERVER_COMMAND", "").strip()
    if not configured:
        return [sys.executable, "-m", "rhema_lsp", "serve"]
    if configured.startswith("["):
        command: list[str] = json.loads(configured)
        return command
    return shlex.split(configured)


@pytest.fixture
def model() -> Iterator[FakeModelServer]:
    """The scripted model the server talks to (OpenAI wire, 127.0.0.1)."""
    with FakeModelServer(wire="openai", models=[FAKE_MODEL]) as server:
        yield server


@pytest.fixture
def extra_settings() -> dict[str, Any]:
    """More VS Code user settings for one test (override with ``parametrize``)."""
    return {}


@pytest.fixture
def workspace_files() -> dict[str, str]:
    """More files of the workspace for one test, by relative path (override with
    ``parametrize``), written before code-server opens it."""
    return {}


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots are kept after the run."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class VSCode:
    """A running code-server with the extension installed, and how to drive it."""

    url: str
    workspace: Path
    logs_dir: Path
    browser_dir: Path
    driver: Path
    log_file: Path

    def drive(self, steps: list[dict[str, Any]], timeout_s: float = 60) -> list[dict[str, Any]]:
        """Run driver steps in a fresh headless Chromium; return the step results."""
        scenario = self.browser_dir.parent / f"scenario-{time.monotonic_ns()}.json"
        scenario.write_text(
            json.dumps(
                {
                    "url": self.url,
                    "browserDataDir": str(self.browser_dir),
                    "logsDir": str(self.logs_dir),
                    "timeoutMs": int(timeout_s * 1000),
                    "steps": steps,
                    "failureScreenshot": str(
                        ARTIFACTS / f"failure-{self.workspace.parent.name}.png"
                    ),
                }
            )
        )
        proc = subprocess.run(
            ["node", str(self.driver), str(scenario)],
            capture_output=True,
            text=True,
            timeout=timeout_s * 3,
            check=False,
        )
        lines = proc.stdout.strip().splitlines()
        if not lines:
            raise AssertionError(f"driver printed nothing:\n{proc.stderr}\n{self.server_log()}")
        report: dict[str, Any] = json.loads(lines[-1])
        scenario.with_suffix(".report.json").write_text(lines[-1])
        if not report["ok"]:
            raise AssertionError(
                f"driver failed: {report['error']}\n--- Rhema channel:\n{self.channel('Rhema')}"
                f"\n--- Rhema Server channel:\n{self.channel('Rhema Server')[-4000:]}"
                f"\n--- code-server:\n{self.server_log()}"
            )
        steps_done: list[dict[str, Any]] = report["steps"]
        return steps_done

    @property
    def settings_file(self) -> Path:
        """VS Code's user settings (``settings.json``), as the test wrote them and the
        extension updates them."""
        return self.logs_dir.parent / "User" / "settings.json"

    def channel(self, name: str) -> str:
        """The whole text of the output channel ``name`` so far (as the driver reads it)."""
        logs = sorted(
            path
            for path in self.logs_dir.glob(f"**/output_logging_*/*-{name}.log")
            if path.is_file()
        )
        return "".join(path.read_text(errors="replace") for path in logs)

    def server_log(self) -> str:
        """code-server's own output, for failure messages."""
        return self.log_file.read_text(errors="replace")[-4000:]


@pytest.fixture
def vscode(
    tmp_path: Path,
    code_server: Path,
    installed_extensions: Path,
    driver: Path,
    server_command: list[str],
    model: FakeModelServer,
    extra_settings: dict[str, Any],
    workspace_files: dict[str, str],
) -> Iterator[VSCode]:
    """A fresh code-server (fresh XDG dirs) with the packaged extension, the real server
    configured for ``model``, torn down as a group."""
    home = tmp_path / "home"
    env = {
        **{name: value for name, value in os.environ.items() if name not in PROVIDER_ENV},
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
    }
    user_data = home / "user-data"
    extensions = home / "extensions"
    settings = user_data / "User" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        json.dumps(
            {
                "workbench.startupEditor": "none",
                "workbench.tips.enabled": False,
                "telemetry.telemetryLevel": "off",
                "extensions.autoCheckUpdates": False,
                "extensions.autoUpdate": False,
                "rhema.server.command": server_command,
                "rhema.provider": "custom",
                "rhema.protocol": "openai",
                "rhema.baseUrl": model.base_url,
                "rhema.model": FAKE_MODEL,
                "rhema.mode": "edit",
                "rhema.logLevel": "info",
                # Off unless a test turns it on: completions and next edits
                # would use up the scripted model's replies as the test types.
                "rhema.inlineCompletion": False,
                **extra_settings,
            }
        )
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hello.py").write_text('print("hello")\n')
    for name, text in workspace_files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    base = [
        str(code_server),
        "--user-data-dir",
        str(user_data),
        "--extensions-dir",
        str(extensions),
    ]
    _copy_extensions(installed_extensions, extensions)
    port = _free_port()
    log_file = tmp_path / "code-server.log"
    with log_file.open("w") as log:
        proc = subprocess.Popen(
            [
                *base,
                "--auth",
                "none",
                "--bind-addr",
                f"127.0.0.1:{port}",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                str(workspace),
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_healthy(port, proc, log_file)
        yield VSCode(
            url=f"http://127.0.0.1:{port}/?folder={workspace}",
            workspace=workspace,
            logs_dir=user_data / "logs",
            browser_dir=tmp_path / "chromium",
            driver=driver,
            log_file=log_file,
        )
    finally:
        _kill_group(proc)


def _wait_healthy(port: int, proc: subprocess.Popen[bytes], log_file: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"code-server exited {proc.returncode}:\n{log_file.read_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise RuntimeError(f"code-server did not answer on {port}:\n{log_file.read_text()}")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    else:
        # The leader is gone; its extension hosts and servers may not be.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return


def release(model: FakeModelServer) -> dict[str, Any]:
    """A driver step that lets the model's held answer (``hold=N`` on a reply) go on: the
    test paces the model by what it has seen, not by delays."""
    return {"get": f"{model.origin}/release"}


def user_texts(request: dict[str, Any]) -> list[str]:
    """The text of every user message of one chat-completions request body."""
    texts = []
    for message in request["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        texts.append(content)
    return texts
