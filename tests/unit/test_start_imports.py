"""Each door loads only what it needs to answer ``initialize``.

The real door runs in a fresh interpreter (``rhema_lsp.cli.main`` on a
stdin holding ``initialize``, then the end of the input) and prints the
modules it had loaded once it ended: the providers, the engine's loop, the
tools, the command models, the session store, MCP's SDK and httpx wait for
the first command. The lazy package roots (:mod:`rhema_lsp.lazy`) still
export every name they list, and the contract's light name table matches
its command table.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from rhema_lsp.contract import COMMANDS, commands
from rhema_lsp.contract.names import COMMAND_NAMES

pytestmark = pytest.mark.process  # starts child processes

REPO = Path(__file__).resolve().parents[2]

LAZY_ROOTS = (
    "rhema_lsp.acp",
    "rhema_lsp.contract",
    "rhema_lsp.engine",
    "rhema_lsp.providers",
    "rhema_lsp.sessions",
    "rhema_lsp.tools",
)

LATER = (
    "rhema_lsp.providers.openai",
    "rhema_lsp.providers.resolve",
    "rhema_lsp.engine.agent",
    "rhema_lsp.tools.resolver",
    "rhema_lsp.contract.commands",
    "rhema_lsp.sessions.store",
    "rhema_lsp.mcp.hub",
    "rhema_lsp.runs.turn",
    "rhema_lsp.server.service",
    "httpx",
    "mcp",
    "sqlite3",
)
"""What no door loads before its first command."""

PROBE = """\
import atexit, json, sys
atexit.register(lambda: sys.__stderr__.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n"))
from rhema_lsp.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def loaded_by_door(argv: list[str], stdin: bytes, tmp_path: Path) -> tuple[set[str], bytes]:
    """The modules the door ``argv`` had loaded when it ended, and its stdout."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    lines = [line for line in done.stderr.decode().splitlines() if line.startswith("MODULES ")]
    assert lines, done.stderr.decode()
    return set(json.loads(lines[-1].removeprefix("MODULES "))), done.stdout


def test_serve_answers_initialize_without_the_agent_machinery(tmp_path: Path) -> None:
    options = {"provider": "custom", "protocol": "openai", "baseUrl": "http://127.0.0.1:9/v1"}
    stdin = _frame(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": None,
                "rootUri": tmp_path.as_uri(),
                "capabilities": {},
                "initializationOptions": options,
            },
        }
    )
    loaded, stdout = loaded_by_door(["serve"], stdin, tmp_path)
    assert b'"executeCommandProvider"' in stdout and b'"rhema.turn"' in stdout
    later = {*LATER, "rhema_lsp.runs.registry", "rhema_lsp.engine.events"}
    later |= {"rhema_lsp.engine.messages", "rhema_lsp.server.state"}
    assert loaded.isdisjoint(later), sorted(loaded & later)
    assert "pygls.lsp.server" in loaded


def test_serves_first_status_without_loading_what_runs_turns(tmp_path: Path) -> None:
    """``rhema.status`` loads its handler's module, not the other handlers'."""
    options = {"provider": "custom", "protocol": "openai", "baseUrl": "http://127.0.0.1:9/v1"}
    folder = tmp_path / "project"
    folder.mkdir()
    initialize = {
        "processId": None,
        "rootUri": folder.as_uri(),
        "capabilities": {},
        "initializationOptions": options,
    }
    messages: list[dict[str, object]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "workspace/executeCommand",
            "params": {"command": "rhema.status", "arguments": [{}]},
        },
    ]
    stdin = b"".join(_frame(message) for message in messages)
    loaded, stdout = loaded_by_door(["serve"], stdin, tmp_path)
    assert b'"languageAnswers"' in stdout  # the status answer
    assert "rhema_lsp.server.handlers.status" in loaded
    handlers = [f"rhema_lsp.server.handlers.{m}" for m in ("runs", "sessions", "checkpoints")]
    not_yet = {*handlers, "rhema_lsp.runs.rewind", "rhema_lsp.runs.changes", "mcp"}
    assert loaded.isdisjoint(not_yet), sorted(loaded & not_yet)


ACP_PROBE = """\
import sys
from rhema_lsp.cli import build_parser
from rhema_lsp.cli.flags import settings_from
args = build_parser().parse_args(sys.argv[1:])
settings_from(args)
import rhema_lsp.acp.main
print(" ".join(sorted(sys.modules)))
"""


def test_acp_reaches_its_first_answer_without_the_sdk_pydantic_or_the_agent() -> None:
    argv = ["acp", "--provider", "custom", "--protocol", "openai", "--mode", "ask"]
    argv += ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--allow", "ls"]
    done = subprocess.run(
        [sys.executable, "-c", ACP_PROBE, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=True,
    )
    loaded = set(done.stdout.split())
    assert "rhema_lsp.acp.handshake" in loaded
    heavy = {"acp", "pydantic", "rhema_lsp.acp.agent", "rhema_lsp.runs.settings", *LATER}
    assert loaded.isdisjoint(heavy), sorted(loaded & heavy)


READY_PROBE = """\
import json, sys
from rhema_lsp.jsonrpc import stdio
written = stdio.FdWriter.write
async def write(self, data):
    if b'"sessionId"' in data and b'"result"' in data:
        sys.__stderr__.write("AT-SESSION-NEW " + json.dumps(sorted(sys.modules)) + "\\n")
    await written(self, data)
stdio.FdWriter.write = write
from rhema_lsp.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def test_acp_answers_session_new_before_the_sdk_pydantic_or_the_agent_load(
    tmp_path: Path,
) -> None:
    """The real door, fed ``initialize`` and ``session/new`` at once: what it
    had loaded when it wrote the ``session/new`` answer."""
    project = tmp_path / "project"
    project.mkdir()
    argv = ["acp", "--provider", "custom", "--protocol", "openai"]
    argv += ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--mode", "ask"]
    stdin = b"".join(
        json.dumps(message).encode() + b"\n"
        for message in (
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": str(project), "mcpServers": []},
            },
        )
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-c", READY_PROBE, *argv],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    marks = [
        line for line in done.stderr.decode().splitlines() if line.startswith("AT-SESSION-NEW ")
    ]
    assert marks, done.stderr.decode()
    loaded = set(json.loads(marks[0].removeprefix("AT-SESSION-NEW ")))
    heavy = {"acp", "pydantic", "rhema_lsp.acp.agent", "rhema_lsp.runs.settings", *LATER}
    heavy |= {"lsprotocol.types", "rhema_lsp.tools.gate", "rhema_lsp.engine.messages"}
    assert loaded.isdisjoint(heavy), sorted(loaded & heavy)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("id") for a in answers[:2]] == [0, 1]
    assert answers[1]["result"]["modes"]["currentModeId"] == "ask"


def test_the_command_table_is_every_spec_in_the_order_of_the_names() -> None:
    specs = [value for value in vars(commands).values() if isinstance(value, commands.CommandSpec)]
    assert set(specs) == set(COMMANDS) and len(COMMANDS) == len(specs)
    assert tuple(spec.name for spec in COMMANDS) == COMMAND_NAMES


@pytest.mark.parametrize("root", LAZY_ROOTS)
def test_a_lazy_root_exports_every_name_it_lists(root: str) -> None:
    module = importlib.import_module(root)
    for name in module.__all__:
        value = getattr(module, name)
        assert value is not None and not isinstance(value, types.ModuleType), name
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018 -- the lookup is the test
