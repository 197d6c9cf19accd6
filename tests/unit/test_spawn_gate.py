"""The spawn gate attacked from every door: a cloned repository plants
programs named like the user's (``basedpyright-langserver``, ``pytest``, an
MCP server) in the workspace, the user's ``PATH`` has an empty, a relative
or a workspace entry before the real ones, and the environment holds
provider keys. Whatever the door (the agent's language servers,
``run_command``, an MCP stdio server, a command in an ACP client's
terminal), the planted program never starts, the real one does, and no key
reaches it. And no module starts a process but through the gate."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rhema_lsp.engine import CancelSignal, ToolCall, ToolContext
from rhema_lsp.language.pool import AgentLanguages
from rhema_lsp.tools import MemoryEditor, WorkspaceTools
from rhema_lsp.tools.spawn import clean_path, find_program, scrubbed_environment

pytestmark = pytest.mark.process  # starts child processes

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "language_server.py"
KEYS = {
    "OPENAI_API_KEY": "sk-openai-leak",
    "ANTHROPIC_API_KEY": "sk-ant-leak",
    "RHEMA_API_KEY": "rhema-leak",
    "GEMINI_API_KEY": "gemini-leak",
    "GITHUB_TOKEN": "ghp-leak",
    "my_service_password": "pw-leak",
}
LEAKS = tuple(KEYS.values())


class Scene:
    """A workspace holding planted programs, a real bin folder outside it."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "project"
        self.bin = tmp_path / "real-bin"
        self.planted = tmp_path / "planted-ran"
        self.record = tmp_path / "record.jsonl"
        (self.root / "bin").mkdir(parents=True)
        self.bin.mkdir()
        (self.root / "a.py").write_text("def greet():\n    pass\n\ngreet()\n")

    def program(self, folder: Path, name: str, body: str) -> Path:
        path = folder / name
        path.write_text(body)
        path.chmod(0o755)
        return path

    def plant(self, name: str) -> None:
        """``name`` in the workspace's root and its ``bin``: it marks that it ran."""
        for folder in (self.root, self.root / "bin"):
            self.program(folder, name, f"#!/bin/sh\necho planted >> {self.planted}\n")

    def ran_planted(self) -> bool:
        return self.planted.exists()


@pytest.fixture
def scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scene:
    made = Scene(tmp_path)
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(made.root)  # an empty or relative PATH entry means the workspace
    return made


def hostile_paths(scene: Scene) -> list[str]:
    """PATHs whose first entries would find a planted program."""
    real = f"{scene.bin}{os.pathsep}{os.environ['PATH']}"
    return [
        f"{os.pathsep}{real}",  # empty entry
        f".{os.pathsep}{real}",
        f"bin{os.pathsep}{real}",  # relative
        f"{scene.root / 'bin'}{os.pathsep}{real}",  # inside the workspace
        f"{scene.root}/./bin{os.pathsep}{real}",
    ]


def assert_clean(env: dict[str, str], scene: Scene) -> None:
    assert not any(value in LEAKS for value in env.values()), sorted(env)
    entries = env["PATH"].split(os.pathsep)
    assert all(entry and os.path.isabs(entry) for entry in entries)
    assert not any(Path(entry).resolve().is_relative_to(scene.root) for entry in entries)


def test_clean_path_keeps_absolute_entries_outside_the_roots(tmp_path: Path) -> None:
    root = tmp_path / "w"
    (root / "bin").mkdir(parents=True)
    (tmp_path / "link").symlink_to(root / "bin")
    path = os.pathsep.join(
        ["", ".", "bin", str(root / "bin"), str(tmp_path / "link"), "/usr/bin", "/bin", "/usr/bin"]
    )
    assert clean_path(path, [root]) == "/usr/bin:/bin"
    assert clean_path("/w-evil/bin:/w/bin", [Path("/w")]) == "/w-evil/bin"
    assert scrubbed_environment({**KEYS, "HOME": "/h"}) == {"HOME": "/h"}


def test_find_program_never_finds_a_planted_one(scene: Scene) -> None:
    scene.plant("tool")
    real = scene.program(scene.bin, "tool", "#!/bin/sh\n")
    for path in hostile_paths(scene):
        assert find_program("tool", [scene.root], scene.root, path) == str(real)
    assert find_program("tool", [scene.root], scene.root, "::bin") is None


@pytest.mark.parametrize("which", range(5))
async def test_the_language_server_door(
    scene: Scene, monkeypatch: pytest.MonkeyPatch, which: int
) -> None:
    scene.plant("basedpyright-langserver")
    scene.program(
        scene.bin,
        "basedpyright-langserver",
        f"#!/bin/sh\nexec {sys.executable} {FAKE} ok {scene.record}\n",
    )
    monkeypatch.setenv("PATH", hostile_paths(scene)[which])
    languages = AgentLanguages(MemoryEditor([scene.root]), lambda: [scene.root])
    uri = (scene.root / "a.py").as_uri()
    try:
        answer = await languages.request(
            "textDocument/definition",
            {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 1}},
            uri=uri,
        )
    finally:
        await languages.aclose()
    assert answer is not None and answer.source == "basedpyright"
    assert not scene.ran_planted()
    (started,) = [json.loads(line) for line in scene.record.read_text().splitlines()]
    assert_clean(started["env"], scene)


@pytest.mark.parametrize("which", range(5))
async def test_the_run_command_door(scene: Scene, which: int) -> None:
    scene.plant("pytest")
    scene.program(scene.bin, "pytest", "#!/bin/sh\necho real pytest\nenv\n")
    env = {**os.environ, "PATH": hostile_paths(scene)[which]}
    tools = WorkspaceTools(
        [scene.root],
        scene.root,
        "agent",
        MemoryEditor([scene.root]),
        command_allowlist=["pytest"],
        env=env,
    )
    call = ToolCall(id="c", name="run_command", args={"command": "pytest -q"})
    result = await tools.resolve_streaming(call, ToolContext(cwd=scene.root), lambda _c: None)
    assert result.content.startswith("real pytest\n"), result.content
    assert not scene.ran_planted()
    printed = dict(line.split("=", 1) for line in result.content.splitlines()[1:-1] if "=" in line)
    assert_clean(printed, scene)


@pytest.mark.parametrize("which", range(5))
def test_the_mcp_stdio_door(scene: Scene, monkeypatch: pytest.MonkeyPatch, which: int) -> None:
    from mcp.client.stdio import get_default_environment

    from rhema_lsp.mcp.config import McpServerConfig
    from rhema_lsp.mcp.transports import stdio_parameters

    scene.plant("notes-mcp")
    real = scene.program(scene.bin, "notes-mcp", "#!/bin/sh\n")
    monkeypatch.setenv("PATH", hostile_paths(scene)[which])
    config = McpServerConfig(command="notes-mcp", args=("--stdio",), env={"NOTES_TOKEN": "given"})
    parameters = stdio_parameters("notes", config, lambda text, _what: text, scene.root)
    assert [parameters.command, *parameters.args] == [str(real), "--stdio"]
    env = get_default_environment() | (parameters.env or {})  # what the SDK starts it with
    assert env["NOTES_TOKEN"] == "given"  # the user's entry gives it: kept
    assert_clean({k: v for k, v in env.items() if k != "NOTES_TOKEN"}, scene)


async def test_the_acp_terminal_door(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client runs the command in the editor's environment plus the
    variables the agent sends, as an editor does."""
    from acp.schema import CreateTerminalResponse, TerminalExitStatus, TerminalOutputResponse

    from rhema_lsp.acp.terminals import TerminalShell
    from rhema_lsp.tools.confined_fs import ConfinedFS

    scene.plant("pytest")
    scene.program(scene.bin, "pytest", "#!/bin/sh\necho real pytest\nenv\n")
    monkeypatch.setenv("PATH", hostile_paths(scene)[0])
    outputs: dict[str, str] = {}

    class Client:
        async def create_terminal(self, session_id: str, command: str, **kw: Any) -> Any:
            env = {**os.environ, **{v.name: v.value for v in kw["env"]}}
            process = await asyncio.create_subprocess_exec(
                command, *kw["args"], cwd=kw["cwd"], env=env, stdout=asyncio.subprocess.PIPE
            )
            stdout, _ = await process.communicate()
            outputs["t"] = stdout.decode()
            return CreateTerminalResponse(terminal_id="t")

        async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> None:
            return None

        async def terminal_output(self, session_id: str, terminal_id: str) -> Any:
            return TerminalOutputResponse(
                output=outputs[terminal_id],
                truncated=False,
                exit_status=TerminalExitStatus(exit_code=0),
            )

        async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
            return None

        async def release_terminal(self, session_id: str, terminal_id: str) -> None:
            return None

    editor: Any = SimpleNamespace(call_id=None)
    shell = TerminalShell(Client(), "s", editor, None)  # type: ignore[arg-type]
    outcome = await shell(
        "pytest -q",
        scene.root,
        ConfinedFS([scene.root]),
        dict(os.environ),
        30,
        CancelSignal(),
        lambda _chunk: None,
    )
    assert outcome.output.startswith("real pytest\n"), outcome.output
    assert not scene.ran_planted()
    printed = dict(line.split("=", 1) for line in outcome.output.splitlines()[1:] if "=" in line)
    assert_clean(printed, scene)


SPAWNS = re.compile(
    r"create_subprocess_(exec|shell)|open_process|subprocess\.(run|Popen|call|check_)"
    r"|os\.(exec|spawn|posix_spawn|system|popen)|stdio_client\(|StdioServerParameters\("
)
THROUGH_THE_GATE = {
    "tools/commands.py",
    "tools/ripgrep.py",
    "mcp/transports.py",
    "runs/hook_runner.py",
    "runs/worktrees.py",
}
"""Modules that start processes: each takes its program and environment from the gate."""
PROBE = "tools/sandbox.py"
"""Runs only its own ``bwrap`` on ``/bin/true``, with an empty environment, to
see whether the kernel allows a sandbox."""
ENDPOINT = "jsonrpc/child.py"
"""Starts what its callers hand it: the language connection (through the gate) and
the headless client (the agent's own server, which needs the keys)."""


def test_no_process_is_started_but_through_the_gate() -> None:
    package = Path(__file__).resolve().parents[2] / "rhema_lsp"
    starting = set()
    for path in package.rglob("*.py"):
        code = "\n".join(
            line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")
        )
        if SPAWNS.search(re.sub(r'"""(.|\n)*?"""', "", code)):
            starting.add(path.relative_to(package).as_posix())
    assert starting == THROUGH_THE_GATE | {ENDPOINT, PROBE}
    for module in THROUGH_THE_GATE:
        assert "launch(" in (package / module).read_text()
    spawners = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if "StdioEndpoint.spawn(" in path.read_text()
    }
    assert spawners == {"language/connection.py", "headless/connection.py"}
    assert "started.argv, started.env" in (package / "language/connection.py").read_text()
