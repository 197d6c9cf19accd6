"""``rhema-lsp acp`` driven by the official ACP TypeScript SDK's client
(tests/acp/ts_client, the scenarios of ``more.mjs``):

- Terminal Auth as a client runs it: ``initialize`` offers the terminal
  method to a client that declares ``auth.terminal``; the client runs the
  agent's command with the method's args, the user's answers on its stdin
  (an endpoint of their own, its protocol and a model); it exits 0, the
  choice is stored in the user's config directory (0600, not in the
  workspace), and the next session, on the same connection, sends its
  requests to that endpoint and model, though the agent was started with
  no provider at all;
- ``session/fork``: the fork holds the source's conversation (its next
  request carries the first prompt and answer) and its mode; a client that
  declares boolean options is offered ``network`` and sets it with a
  boolean, a string value being refused (-32602).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

from tests.acp.test_typescript_client import drive
from tests.fakes.model_server import FakeModelServer, text_reply


def _texts(request: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in request["messages"]]


async def test_terminal_auth_stores_the_choice_the_next_session_uses_and_it_forks(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(text_reply("Signed in: noted 42."), text_reply("It was 42."))
    answers = f"custom\n{fake.base_url}\nopenai\nfake-large\n\n"
    seen = await drive(
        "signin",
        fake,
        state,
        workspace,
        command=[sys.executable, "-m", "rhema_lsp", "acp"],  # no provider named
        setupInput=answers,
    )
    r = seen["results"]
    methods = {m["id"]: m for m in r["initialize"]["authMethods"]}
    assert methods["rhema-setup"]["type"] == "terminal"
    assert methods["rhema-setup"]["args"] == ["--setup"]
    assert "type" not in methods["local-server"]  # Agent Auth
    assert r["setupExit"] == 0, r["setupOut"]
    stored = state / "config" / "rhema-lsp" / "provider.json"
    assert str(stored) in r["setupOut"]
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert not [p for p in os.listdir(workspace) if p.endswith(".json")]
    assert r["prompted"]["stopReason"] == "end_turn"
    request, in_fork = fake.requests
    assert request["model"] == "fake-large" and in_fork["model"] == "fake-large"
    assert "hello after sign-in" in _texts(request)[-1]

    # the fork
    assert r["initialize"]["agentCapabilities"]["sessionCapabilities"]["fork"] == {}
    forked = r["forked"]
    options = {o["id"]: o for o in forked["configOptions"]}
    assert options["mode"]["currentValue"] == "ask"  # the source's
    assert options["network"] == {
        "id": "network",
        "name": "Network for commands",
        "description": "Sandboxed commands may reach the network",
        "type": "boolean",
        "currentValue": False,
    }
    after = {o["id"]: o for o in r["network"]["configOptions"]}
    assert after["network"]["currentValue"] is True
    assert r["badNetwork"] == {"error": -32602}
    assert r["inFork"]["stopReason"] == "end_turn"
    texts = _texts(in_fork)
    assert any("hello after sign-in" in t for t in texts) and "Signed in: noted 42." in texts
    assert "what number?" in texts[-1]
    ids = {s["sessionId"] for s in r["listed"]["sessions"]}
    assert forked["sessionId"] in ids and len(ids) == 2
