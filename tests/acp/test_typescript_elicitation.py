"""MCP elicitation through ACP's ``elicitation/create``, for a client on the
official ACP TypeScript SDK (``tests/acp/ts_client/elicit.mjs``) that
declared ``elicitation`` (form and url): an MCP server's form goes to the
client as a form elicitation (its schema as the server gave it, the answer
the client's), and a page a server requires first (``-32042``) goes as a URL
elicitation, after whose completion the call is sent again and succeeds and
the server's ``notifications/elicitation/complete`` reaches the client as
ACP's ``elicitation/complete``.
One agent process, the scripted MCP server (it starts in a tenth of a
second), one prompt each."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.acp.client import REPO, agent_args
from tests.fakes.mcp_scripted import SURVEY, entry
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

DRIVER = Path(__file__).parent / "ts_client" / "elicit.mjs"


def stdio(name: str, command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """A stdio server as an ACP client passes it."""
    return {
        "name": name,
        "command": command[0],
        "args": command[1:],
        "env": [{"name": key, "value": value} for key, value in env.items()],
    }


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_a_form_and_a_sign_in_page_go_through_elicitation_create(
    fake: FakeModelServer, state: Path, workspace: Path, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    scripted = entry(marks, FAKE_SCRIPT_PROTOCOL="2025-11-25")
    servers = [stdio("s", [str(scripted["command"]), *scripted["args"]], dict(scripted["env"]))]
    fake.script(
        tool_reply(("s__survey", {})),
        text_reply("Ordered."),
        tool_reply(("s__vault", {})),
        text_reply("Opened."),
    )
    config = {
        "command": [sys.executable, *agent_args(fake, "--mode", "agent")],
        "cwd": str(workspace),
        "env": {
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
            "XDG_STATE_HOME": str(state),
            "XDG_CONFIG_HOME": str(state / "config"),
            "OPENAI_API_KEY": "",
        },
        "mcpServers": servers,
        "form": {"confirm": True, "size": "large"},
        "visited": str(marks / "visited"),
        "prompts": ["order a pizza", "open the vault"],
    }
    process = await asyncio.create_subprocess_exec(
        "node", str(DRIVER), json.dumps(config), cwd=DRIVER.parent, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), 120)
    seen = json.loads(out)
    assert seen["failure"] is None, seen["failure"]

    form, page = seen["elicited"]
    assert form["mode"] == "form" and form["message"] == "s: Your order"
    assert form["requestedSchema"] == SURVEY  # as the server gave it
    assert (page["mode"], page["url"], page["elicitationId"]) == (
        "url",
        "https://vault.example/connect",
        "e1",
    )
    assert page["sessionId"] == form["sessionId"]
    assert seen["completed"] == [{"elicitationId": "e1"}]  # its page prompt can close
    _first, ordered, _third, opened = fake.requests
    assert tool_results(ordered) == ['survey: accept {"confirm": true, "size": "large"}']
    assert tool_results(opened)[-1] == "opened"  # sent again once the page was visited
    assert [r["stopReason"] for r in seen["results"]] == ["end_turn", "end_turn"]
