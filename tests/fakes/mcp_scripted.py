"""A scripted MCP server over stdio, without the SDK (it starts in a tenth
of a second): ``python -m tests.fakes.mcp_scripted``.

It speaks the handshake era (``initialize``, protocol 2025-06-18): tools
``echo`` (text back) and ``crash`` (the process exits before answering);
it declares ``logging``, ``prompts`` and ``resources``. Every request it
does not know is -32601, the 2026 probe (``server/discover``) included.
What it does otherwise comes from its environment:

- ``FAKE_SCRIPT_MARKS``: a folder; every start appends its pid to
  ``starts`` there, and every ``ping`` received a line to ``pings``;
- ``FAKE_SCRIPT_REFUSE``: methods (comma-separated) answered with an error
  (-32603), e.g. ``logging/setLevel,prompts/list``;
- ``FAKE_SCRIPT_IGNORE``: methods never answered;
- ``FAKE_SCRIPT_SLOW_START``: seconds to wait before answering
  ``initialize`` on every start but the first (a restart that takes time);
- ``FAKE_SCRIPT_SLOW_FIRST``: the same, for the first start only;
- ``FAKE_SCRIPT_PING``: ``error`` answers ``ping`` with an error (still
  alive);
- ``FAKE_SCRIPT_PROTOCOL``: the protocol version it answers instead.

The tool ``vault`` needs a page visited first: until ``visited`` exists in
the marks folder it answers ``-32042`` naming ``https://vault.example/connect``
(elicitation ``e1``; run it with ``FAKE_SCRIPT_PROTOCOL=2025-11-25``,
the first version with URL elicitations), and once that file appears it sends
``notifications/elicitation/complete`` for ``e1`` (as a server hears a sign-in
completed); then it answers ``opened``. The tool ``survey`` asks the client a
form (``elicitation/create``: a boolean, an enum, an optional enum) and
answers ``survey: <action> <content as JSON>``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def entry(marks: Path, **env: str) -> dict[str, Any]:
    """An ``mcpServers`` entry that runs this server with ``env``."""
    return {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_scripted"],
        "env": {"FAKE_SCRIPT_MARKS": str(marks), "PYTHONPATH": str(ROOT), **env},
    }


def starts(marks: Path) -> list[int]:
    """The pids of every start so far."""
    path = marks / "starts"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def pings(marks: Path) -> int:
    """How many pings the server has received, over every start."""
    path = marks / "pings"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _methods(name: str) -> set[str]:
    return {m for m in os.environ.get(name, "").split(",") if m}


TOOLS = [
    {
        "name": "echo",
        "description": "Say the text back",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {"name": "crash", "description": "Exit at once", "inputSchema": {"type": "object"}},
    {"name": "vault", "description": "Needs a page visited", "inputSchema": {"type": "object"}},
    {"name": "survey", "description": "Asks a form", "inputSchema": {"type": "object"}},
]
SURVEY = {
    "type": "object",
    "properties": {
        "confirm": {"type": "boolean", "title": "Confirm"},
        "size": {"type": "string", "title": "Size", "enum": ["small", "large"]},
        "crust": {"type": "string", "title": "Crust", "enum": ["thin", "thick"]},
    },
    "required": ["confirm", "size"],
}
PAGE = "https://vault.example/connect"
_OUT = threading.Lock()


def _send(message: dict[str, Any]) -> None:
    with _OUT:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()


def _vault(msg_id: object, marks: Path) -> None:
    """Answer ``vault``: -32042 until the page was visited (see the module docstring)."""
    if (marks / "visited").exists():
        _send({"id": msg_id, "result": {"content": [{"type": "text", "text": "opened"}]}})
        return
    page = {"mode": "url", "url": PAGE, "message": "Connect the vault", "elicitationId": "e1"}
    _send({"id": msg_id, "error": {"code": -32042, "message": "visit the page",
                                   "data": {"elicitations": [page]}}})  # fmt: skip

    def heard() -> None:
        while not (marks / "visited").exists():
            time.sleep(0.02)
        _send({"method": "notifications/elicitation/complete",
               "params": {"elicitationId": "e1"}})  # fmt: skip

    threading.Thread(target=heard, daemon=True).start()


def _result(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    if method == "initialize":
        return {
            "protocolVersion": os.environ.get("FAKE_SCRIPT_PROTOCOL", "2025-06-18"),
            "capabilities": {"tools": {}, "logging": {}, "prompts": {}, "resources": {}},
            "serverInfo": {"name": "scripted", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "prompts/list":
        return {"prompts": []}
    if method == "resources/list":
        return {"resources": []}
    if method in ("ping", "logging/setLevel"):
        return {}
    if method == "tools/call":
        if params.get("name") == "crash":
            os._exit(3)
        text = (params.get("arguments") or {}).get("text", "")
        return {"content": [{"type": "text", "text": f"echo: {text}"}], "isError": False}
    return None


def main() -> None:
    marks = Path(os.environ.get("FAKE_SCRIPT_MARKS", "."))
    first = not (marks / "starts").exists()
    with (marks / "starts").open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    refuse, ignore = _methods("FAKE_SCRIPT_REFUSE"), _methods("FAKE_SCRIPT_IGNORE")
    slow = float(
        os.environ.get("FAKE_SCRIPT_SLOW_FIRST" if first else "FAKE_SCRIPT_SLOW_START", "0")
    )
    surveys: dict[str, object] = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, msg_id = message.get("method"), message.get("id")
        if method is None and msg_id in surveys:  # the client's answer to a form
            answer = message.get("result") or {}
            text = f"survey: {answer.get('action')} {json.dumps(answer.get('content'))}"
            _send(
                {"id": surveys.pop(msg_id), "result": {"content": [{"type": "text", "text": text}]}}
            )
            continue
        if msg_id is None or method is None or method in ignore:
            continue
        if method == "ping":
            with (marks / "pings").open("a") as handle:
                handle.write("ping\n")
        if method == "tools/call" and (message.get("params") or {}).get("name") == "survey":
            surveys[f"form-{msg_id}"] = msg_id
            params = {"mode": "form", "message": "Your order", "requestedSchema": SURVEY}
            _send({"id": f"form-{msg_id}", "method": "elicitation/create", "params": params})
            continue
        if method == "initialize" and slow:
            time.sleep(slow)
        if method in refuse or (method == "ping" and os.environ.get("FAKE_SCRIPT_PING")):
            _send({"id": msg_id, "error": {"code": -32603, "message": f"{method} refused"}})
            continue
        if method == "tools/call" and (message.get("params") or {}).get("name") == "vault":
            _vault(msg_id, marks)
            continue
        result = _result(method, message.get("params") or {})
        if result is None:
            _send({"id": msg_id, "error": {"code": -32601, "message": f"no method {method}"}})
        else:
            _send({"id": msg_id, "result": result})


if __name__ == "__main__":
    main()
