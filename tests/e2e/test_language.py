"""The language tools headless, through the real server and the agent's own
language server (basedpyright from PyPI, found on PATH with nothing
configured): references, definition, an outline, a rename across two files
undone by ``rhema-lsp rewind``, and an edit's type error in its own result,
then reported gone by the fix. Hostile servers (hanging, crashing, writing
garbage) cost a bounded wait and a clear message, and the turn goes on."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli import ENTRY, ask_command, run
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

pytestmark = pytest.mark.e2e

CORE = 'def greet(name: str) -> str:\n    return "Hello, " + name\n'
USE = 'from pkg.core import greet\n\nprint(greet("Ann"))\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "core.py").write_text(CORE)
    (folder / "pkg" / "use.py").write_text(USE)
    return folder


def tool_results(fake: FakeModelServer) -> list[str]:
    """Every tool result the model was sent, in order (the last request holds them all)."""
    messages = fake.requests[-1]["messages"]
    return [m["content"] for m in messages if m.get("role") == "tool"]


def test_basedpyright_is_on_path() -> None:
    # The tests below rely on the [test] extra's basedpyright; say so plainly.
    assert shutil.which("basedpyright-langserver"), "pip install basedpyright (the [test] extra)"


def test_navigation_and_diagnostics_after_edits(
    fake: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake.script(
        tool_reply(
            ("references", {"path": "pkg/core.py", "line": 1, "symbol": "greet"}),
            ("definition", {"path": "pkg/use.py", "line": 3, "symbol": "greet"}),
            ("symbols", {"query": "", "path": "pkg/core.py"}),
        ),
        tool_reply(("edit_file", {"path": "pkg/use.py", "old_text": '"Ann"', "new_text": "42"})),
        tool_reply(("edit_file", {"path": "pkg/use.py", "old_text": "42", "new_text": '"Bo"'})),
        text_reply("done"),
    )
    done = run(ask_command(fake, project, "--mode", "edit", "--yes", "look at greet"), tmp_path)
    assert done.returncode == 0, done.stderr
    references, definition, outline, broken, fixed = tool_results(fake)
    assert 'pkg/use.py:3: print(greet("Ann"))' in references
    assert "pkg/core.py:1: def greet(name: str) -> str:" in references
    assert "(basedpyright)" in references
    assert "pkg/core.py:1: def greet(name: str) -> str:" in definition
    assert outline.startswith("pkg/core.py (basedpyright):\n1: function greet")
    assert broken.startswith("edited pkg/use.py: 1 replacement\n1 new error: pkg/use.py:3: ")
    assert '"Literal[42]"' in broken and "(basedpyright)" in broken
    assert fixed.startswith("edited pkg/use.py: 1 replacement\n1 error gone: pkg/use.py:3: ")
    assert (project / "pkg" / "use.py").read_text() == USE.replace('"Ann"', '"Bo"')


def test_rename_across_two_files_is_one_edit_and_rewind_undoes_it(
    fake: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    rename = {"path": "pkg/core.py", "line": 1, "symbol": "greet", "new_name": "welcome"}
    fake.script(tool_reply(("rename_symbol", rename)), text_reply("renamed"))
    done = run(ask_command(fake, project, "--mode", "edit", "--yes", "rename greet"), tmp_path)
    assert done.returncode == 0, done.stderr
    (result,) = tool_results(fake)
    assert result.startswith("renamed 'greet' to 'welcome' (basedpyright): 3 edits in 2 files")
    assert (project / "pkg" / "core.py").read_text() == CORE.replace("greet", "welcome")
    assert (project / "pkg" / "use.py").read_text() == USE.replace("greet", "welcome")

    listed = run([*ENTRY, "sessions", "--folder", str(project), "--json"], tmp_path)
    session = json.loads(listed.stdout)[0]["session"]
    rewind = [*ENTRY, "rewind", "--folder", str(project), "--session", session, "--turn", "1"]
    undone = run([*rewind, "--code"], tmp_path)
    assert undone.returncode == 0, undone.stderr
    assert "restored  pkg/core.py" in undone.stdout and "restored  pkg/use.py" in undone.stdout
    assert (project / "pkg" / "core.py").read_text() == CORE
    assert (project / "pkg" / "use.py").read_text() == USE


def test_status_names_the_language_server_found_on_path(
    fake: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    provider = ask_command(fake, project)[ask_command(fake, project).index("--provider") :]
    shown = run([*ENTRY, "status", *provider, "--json"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    languages = json.loads(shown.stdout)["languageServers"]
    python = next(entry for entry in languages if entry["language"] == "python")
    assert python["name"] == "basedpyright" and python["state"] == "available"


def test_the_user_config_file_names_the_language_server_headless_uses(
    fake: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    # A client with no settings UI (headless, ACP) reads languageServers from
    # the user config file: here basedpyright under another name.
    wrapper = tmp_path / "bin" / "my-pyright"
    wrapper.parent.mkdir()
    real = shutil.which("basedpyright-langserver")
    assert real is not None
    wrapper.write_text(f'#!/bin/sh\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    config = tmp_path / "config" / "rhema-lsp" / "config.json"
    config.parent.mkdir(parents=True)
    entries = {"python": {"command": [str(wrapper), "--stdio"]}, "go": {"command": "gopls"}}
    config.write_text(json.dumps({"languageServers": entries}))
    provider = ask_command(fake, project)[ask_command(fake, project).index("--provider") :]

    shown = run([*ENTRY, "status", *provider, "--json"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    python = next(entry for entry in status["languageServers"] if entry["language"] == "python")
    assert (python["name"], python["command"]) == ("my-pyright", [str(wrapper), "--stdio"])
    assert status["languageAnswers"] == "agent"

    fake.script(
        tool_reply(("references", {"path": "pkg/core.py", "line": 1, "symbol": "greet"})),
        text_reply("found"),
    )
    done = run(ask_command(fake, project, "where is greet used?"), tmp_path)
    assert done.returncode == 0, done.stderr
    (references,) = tool_results(fake)
    assert "pkg/use.py:3" in references and "(my-pyright)" in references, references
    # the malformed go entry is named, once, and the rest is used
    assert "languageServers.go" in done.stderr


HOSTILE = {
    "hangs": "import time\nimport sys\nsys.stdin.read()\n",
    "crashes": "import sys\nsys.exit(3)\n",
    "garbage": textwrap.dedent(
        """\
        import sys
        sys.stdin.buffer.read1(1)
        sys.stdout.buffer.write(b"Content-Length: 5\\r\\n\\r\\nnope!")
        sys.stdout.flush()
        sys.stdin.read()
        """
    ),
}


@pytest.mark.parametrize("behaviour", sorted(HOSTILE))
def test_a_hostile_language_server_costs_a_bounded_wait_and_the_turn_goes_on(
    fake: FakeModelServer, project: Path, tmp_path: Path, behaviour: str
) -> None:
    script = tmp_path / "bin" / "basedpyright-langserver"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\n{HOSTILE[behaviour]}")
    script.chmod(0o755)
    fake.script(
        tool_reply(("references", {"path": "pkg/core.py", "line": 1, "symbol": "greet"})),
        tool_reply(("edit_file", {"path": "pkg/use.py", "old_text": '"Ann"', "new_text": "42"})),
        text_reply("went on"),
    )
    env_path = f"{script.parent}{os.pathsep}{os.environ['PATH']}"
    command = ask_command(fake, project, "--mode", "edit", "--yes", "look")
    done = run_with_path(command, tmp_path, env_path)
    assert done.returncode == 0, done.stderr
    assert "went on" in done.stdout
    references, edited = tool_results(fake)
    assert "the language server basedpyright" in references
    assert edited.startswith("edited pkg/use.py: 1 replacement")
    assert (project / "pkg" / "use.py").read_text() == USE.replace('"Ann"', "42")


def run_with_path(command: list[str], tmp_path: Path, path: str) -> Any:
    import subprocess

    env = {
        **os.environ,
        "PATH": path,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )
