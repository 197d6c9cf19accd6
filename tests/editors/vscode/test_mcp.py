"""MCP servers in real VS Code (code-server), against ``@modelcontextprotocol/server-everything``,
the SDK-written fake and a server that hangs at ``initialize``, configured in the user config
file: the servers' prompts are the chat's slash commands (listed when ``/`` starts the input,
their arguments from the words or asked in an input box), their resources `@`-mentions
(offered as `@` is typed, attached to the prompt), "Rhema: MCP Servers…" shows the
failed server with its reason and restarts it, and a server's form is asked field by field
(Answer, then an input box per free-text field) or refused (Deny). In the same editor as the
servers' prompts, the workspace's own command (``.claude/commands/greet.md``) and skill are
slash commands too (``/greet Ann`` reaches the model expanded), and a ``task`` call's subagent
shows as a card inside the task's card, live, until its Cancel stops it alone (the parent
answers on). Screenshots go to ``test-artifacts/vscode/``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.runs.child_runs import CANCELLED
from tests.e2e.test_mcp_reference import EVERYTHING, installed
from tests.editors.vscode.conftest import REPO, VSCode, user_texts
from tests.fakes import mcp_hang
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

pytestmark = pytest.mark.timeout(900)

CHAT = {"in": "chat"}


def chat(step: dict[str, Any]) -> dict[str, Any]:
    return {**step, **CHAT}


@pytest.fixture
def workspace_files() -> dict[str, str]:
    """The workspace's own slash command and skill."""
    return {
        ".claude/commands/greet.md": (
            "---\ndescription: Greet someone\n---\nGreet $ARGUMENTS warmly.\n"
        ),
        ".claude/skills/tidy/SKILL.md": (
            "---\nname: tidy\ndescription: Tidy the imports.\n---\nSort.\n"
        ),
    }


@pytest.fixture
def extra_settings(tmp_path: Path) -> dict[str, Any]:
    """Agent mode, and the MCP servers in the user config file the server reads (the VS Code
    client sends no mcpServers: docs/protocol.md, "Trust")."""
    marks = tmp_path / "marks"
    marks.mkdir()
    config = tmp_path / "home" / "config" / "rhema-lsp" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "everything": {
                        "command": "node",
                        "args": [installed(EVERYTHING), "stdio"],
                        "allow": ["*"],
                    },
                    "fake": {
                        "command": sys.executable,
                        "args": ["-m", "tests.fakes.mcp_server", "stdio"],
                        "env": {"FAKE_MCP_MARKS": str(marks), "PYTHONPATH": str(REPO)},
                        "allow": ["*"],
                    },
                    "hung": mcp_hang.entry(marks),
                }
            }
        )
    )
    return {"rhema.mode": "agent"}


def test_prompts_are_slash_commands_and_the_servers_say_how_they_are(
    vscode: VSCode, model: FakeModelServer, artifacts: Path
) -> None:
    model.script(
        text_reply("Sunny in Paris."),
        text_reply("Rainy in Lyon."),
        text_reply("Hello, Ann!"),
        tool_reply(("task", {"description": "find greet", "prompt": "CHILD: find greet"})),
        tool_reply(("read_file", {"path": "hello.py"})),
        text_reply("CHILD-PARTIAL answer and then much more", chunk=14, hold=2),
        text_reply("The parent carried on."),
    )
    task = ".tool details.subagent"
    hung_log = {"waitLog": "Rhema", "contains": "MCP server hung: failed"}
    listed = chat({"query": ".completion"})
    live = chat({"query": task})
    script = [
        {"command": "Rhema: Open Chat"},
        chat({"click": "#input"}),
        {"typeText": "/mcp__everything__ar"},
        chat({"waitFor": ".completion", "hasText": "/mcp__everything__args-prompt"}),
        chat({"query": ".completion"}),
        {"screenshot": str(artifacts / "chat-slash-commands.png")},
        {"press": "Tab"},
        chat({"query": "#input"}),
        {"typeText": "Paris"},
        {"press": "Enter"},
        chat({"waitFor": "#transcript", "hasText": "Sunny in Paris."}),
        # A required argument the words did not give is asked.
        chat({"click": "#input"}),
        {"typeText": "/mcp__everything__args-prompt"},
        {"press": "Enter"},
        {"input": "Lyon", "title": "Rhema: /mcp__everything__args-prompt"},
        chat({"waitFor": "#transcript", "hasText": "Rainy in Lyon."}),
        # The servers, the hung one failed with its reason; picking it restarts it.
        {"command": "Rhema: MCP Servers…"},
        {"waitFor": ".quick-input-widget .monaco-list-row", "hasText": "hung"},
        {"query": ".quick-input-widget .monaco-list-row"},
        {"screenshot": str(artifacts / "mcp-servers.png")},
        {"input": "hung", "title": "Rhema: MCP servers"},
        hung_log,
        # The workspace's own command and skill are offered at "/" too; /greet runs.
        {"command": "Rhema: Open Chat"},
        chat({"click": "#input"}),
        {"typeText": "/"},
        chat({"waitFor": ".completion", "hasText": "/greet"}),
        listed,
        {"typeText": "gre"},
        {"press": "Tab"},
        {"typeText": "Ann"},
        {"press": "Enter"},
        chat({"waitFor": "#transcript", "hasText": "Hello, Ann!"}),
        # A subagent shows inside its task's card, live; its Cancel stops it alone.
        chat({"click": "#input"}),
        {"typeText": "Find greet"},
        {"press": "Enter"},
        chat({"waitFor": task, "hasText": "CHILD-PARTIAL"}),
        live,
        {"screenshot": str(artifacts / "chat-subagent.png")},
        chat({"click": f"{task} .sub-cancel"}),
        chat({"waitFor": "#transcript", "hasText": "The parent carried on."}),
        chat({"waitFor": f"{task} .sub-state", "hasText": "cancelled"}),
        chat({"query": task}),
    ]
    try:
        steps = vscode.drive(script, timeout_s=240)
    finally:
        model.release()

    def at(step: dict[str, Any]) -> dict[str, Any]:
        return steps[next(n for n, one in enumerate(script) if one is step)]

    offered = [element["text"] for element in steps[4]["elements"]]
    assert offered == ["/mcp__everything__args-prompt city [state] — Arguments Prompt"]
    assert steps[7]["elements"][0]["value"] == "/mcp__everything__args-prompt "
    assert user_texts(model.requests[0])[-1] == "What's weather in Paris?"
    assert user_texts(model.requests[1])[-1] == "What's weather in Lyon?"
    rows = [element["label"] or element["text"] for element in steps[18]["elements"]]
    hung = next(row for row in rows if "hung" in row)
    assert "failed (stdio" in hung and "did not finish starting" in hung, rows
    assert any("everything" in row and "ready (stdio" in row for row in rows), rows
    assert "within 2 s" in at(hung_log)["text"].split("MCP server hung: failed")[1]
    # the workspace's own command and skill, then /greet Ann expanded
    commands = [element["text"] for element in at(listed)["elements"]]
    assert any(text.startswith("/greet") and "Greet someone" in text for text in commands), commands
    assert any(text.startswith("/tidy") for text in commands), commands
    assert user_texts(model.requests[2])[-1] == "Greet Ann warmly."
    # the subagent, live inside the task's card, then cancelled alone
    [shown] = at(live)["elements"]
    assert "running" in shown["text"] and "read_file" in shown["text"], shown
    [ended] = steps[-1]["elements"]
    assert "cancelled" in ended["text"] and "CHILD-PARTIAL" in ended["text"], ended
    result = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert result.startswith(CANCELLED)


@pytest.mark.parametrize("answer", ["Answer", "Deny"])
def test_a_servers_form_is_asked_field_by_field_or_refused(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, answer: str
) -> None:
    model.script(tool_reply(("fake__sign_up", {})), text_reply("Signed up."))
    toast = ".notifications-toasts .notification-toast"
    fields = (
        [
            {"input": "Ada", "title": "Rhema: fake: Name"},
            {"input": "36", "title": "Rhema: fake: Age"},
            {"waitFor": ".quick-input-title", "hasText": "Rhema: fake: Team"},
            {"screenshot": str(artifacts / "mcp-form-field.png")},
            {"input": "", "title": "Rhema: fake: Team"},  # the default, blue
            # Every answer shown once more before it is sent: the user sends them.
            {"waitFor": toast, "hasText": "Send to the MCP server fake"},
            {"click": f"{toast} .monaco-button", "hasText": "Send"},
        ]
        if answer == "Answer"
        else []
    )
    vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"click": "#input"}),
            {"typeText": "Sign me up"},
            {"press": "Enter"},
            {"waitFor": toast, "hasText": "Sign up for the club"},
            {"click": f"{toast} .monaco-button", "hasText": answer},
            *fields,
            chat({"waitFor": "#transcript", "hasText": "Signed up."}),
        ],
        timeout_s=180,
    )

    result = str(model.requests[1]["messages"][-1]["content"])
    assert result == ("member: Ada, 36, blue" if answer == "Answer" else "no member: decline")


def test_an_at_mention_attaches_a_servers_resource(
    vscode: VSCode, model: FakeModelServer, artifacts: Path
) -> None:
    model.script(text_reply("Read them first."))
    mention = "@mcp:fake:fake://notes/readme"
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"click": "#input"}),
            {"typeText": "what do the notes say? @readm"},
            chat({"waitFor": ".completion", "hasText": mention}),
            chat({"query": ".completion"}),
            {"screenshot": str(artifacts / "chat-mcp-resource.png")},
            chat({"click": ".completion", "hasText": mention}),
            chat({"query": "#input"}),
            {"press": "Enter"},
            chat({"waitFor": "#transcript", "hasText": "Read them first."}),
        ],
        timeout_s=180,
    )

    offered = [element["text"] for element in steps[4]["elements"]]
    assert f"{mention} readme (MCP fake, text/plain)" in offered, offered
    assert steps[7]["elements"][0]["value"] == f"what do the notes say? {mention} "
    sent = user_texts(model.requests[0])[-1]
    assert sent.startswith(f"what do the notes say? {mention}")
    assert "fake://notes/readme (MCP server fake)" in sent
    assert "the readme of the notes: read me first" in sent
