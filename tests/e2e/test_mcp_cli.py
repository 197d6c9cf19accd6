"""MCP from the terminal, through real child processes: signing in to an
OAuth-protected server with ``rhema-lsp status`` (it prints the page, waits
while the user signs in — here a client that follows the page's redirects,
as a browser does — and reports the server ready; the tokens stay in the
user state directory, owner-only); ``rhema-lsp ask --yes`` never starting a
project's ``.mcp.json`` programs (``--yes`` answers actions, not trust), and
``--trust-project`` trusting them for that run only; a server that never
answers ``initialize`` costing ``ask`` at most its 2 s wait, then remembered
(the next ``ask`` does not wait for it)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from rhema_lsp.mcp.oauth import token_path
from rhema_lsp.mcp.starting import SLOW_FILE
from tests.e2e.test_cli import ask_command
from tests.fakes.mcp_hang import entry as hanging
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply
from tests.unit.mcp.conftest import Listening, fake_oauth

PAGE = "open this page in your browser: "


@pytest.fixture
def protected(tmp_path: Path) -> Iterator[Listening]:
    server = fake_oauth(tmp_path)
    server.start()
    yield server
    server.stop()


def test_rhema_lsp_status_prints_the_page_and_waits_for_the_sign_in(
    fake: FakeModelServer, workspace: Path, tmp_path: Path, protected: Listening
) -> None:
    url = f"http://127.0.0.1:{protected.port}/mcp"
    config = tmp_path / "config" / "rhema-lsp" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {"locked": {"url": url}}}))
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    command = [sys.executable, "-m", "rhema_lsp", "status", "--folder", str(workspace),
               "--provider", "custom", "--protocol", "openai", "--base-url", fake.base_url,
               "--model", "fake-model"]  # fmt: skip
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as child:
        assert child.stderr is not None and child.stdout is not None
        seen = []
        for line in child.stderr:
            seen.append(line)
            if line.startswith(PAGE):
                page = line.removeprefix(PAGE).strip()
                break
        else:
            raise AssertionError(f"no sign-in page printed: {''.join(seen)}")
        signed = httpx.get(page, follow_redirects=True, timeout=30)
        out, err = child.communicate(timeout=120)

    assert signed.status_code == 200 and "Signed in" in signed.text
    assert child.returncode == 0, err
    assert "locked (http, user config): ready, 1 tool(s)" in out
    stored = token_path(url, tmp_path / "state" / "rhema-lsp")
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert "access_token" in stored.read_text()
    assert json.loads(stored.read_text())["tokens"]["access_token"] not in err + out


def write_project_servers(workspace: Path, marks: Path) -> None:
    """A ``.mcp.json`` whose program appends a line to ``marks/starts`` when it starts."""
    root = Path(__file__).resolve().parents[2]
    entry = {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_server", "stdio"],
        "env": {"FAKE_MCP_MARKS": str(marks), "PYTHONPATH": str(root)},
    }
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": entry}}))


def ask_in(fake: FakeModelServer, workspace: Path, tmp_path: Path, *flags: str) -> Any:
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    began = time.monotonic()
    done = subprocess.run(
        [*ask_command(fake, workspace, "--mode", "agent", *flags, "echo hi")],
        env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
        check=False,
    )  # fmt: skip
    done.elapsed = time.monotonic() - began  # type: ignore[attr-defined]
    return done


def test_ask_yes_never_starts_the_projects_own_programs(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    write_project_servers(workspace, tmp_path)
    fake.script(text_reply("Nothing to echo with."))

    done = ask_in(fake, workspace, tmp_path, "--yes")

    assert done.returncode == 0, done.stderr
    assert "→ Not now (--yes answers actions, not trust)" in done.stderr
    assert "--trust-project" in done.stderr
    assert not (tmp_path / "starts").exists()  # the program never ran
    tools = [tool["function"]["name"] for tool in fake.requests[0].get("tools", [])]
    assert not any(name.startswith("repo__") for name in tools)


def test_ask_trust_project_trusts_a_workspace_file_for_that_run_only(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    write_project_servers(workspace, tmp_path)
    fake.script(tool_reply(("repo__echo", {"text": "hi"})), text_reply("Echoed."))

    done = ask_in(fake, workspace, tmp_path, "--yes", "--trust-project")

    assert done.returncode == 0, done.stderr
    assert "→ Use them this time (--trust-project)" in done.stderr
    assert (tmp_path / "starts").exists()
    assert fake.requests[1]["messages"][-1]["content"] == "echo: hi"
    config = tmp_path / "config" / "rhema-lsp" / "config.json"
    assert not config.exists() or "workspaceMcp" not in config.read_text()


def test_a_hung_server_costs_ask_at_most_its_wait_and_is_then_remembered(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    config = tmp_path / "config" / "rhema-lsp" / "config.json"
    config.parent.mkdir(parents=True)
    # a start bound of a minute: ask must not wait it out
    config.write_text(json.dumps({"mcpServers": {"stuck": hanging(marks, start_timeout=60)}}))
    fake.script(text_reply("Answered."))

    done = ask_in(fake, workspace, tmp_path, "--yes")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Answered."
    assert "MCP server stuck is still starting" in done.stderr
    assert (marks / "starts").exists()
    # remembered for the next ask (which then does not wait for it at all)
    assert len(json.loads((tmp_path / "state" / "rhema-lsp" / SLOW_FILE).read_text())) == 1
    assert done.elapsed < 40  # its wait was 2 s, not the minute
