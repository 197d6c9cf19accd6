"""MCP tools through the real server process: in agent mode the model sees
``<server>__<tool>``, the call asks the editor first, the result comes back
in-band and the events show it like a built-in tool; ``rhema.status`` lists
the servers; in edit mode no server starts."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

ROOT = Path(__file__).resolve().parents[2]


def servers(marks: Path) -> dict[str, Any]:
    return {
        "fake": {
            "command": sys.executable,
            "args": ["-m", "tests.fakes.mcp_server", "stdio"],
            "env": {
                "FAKE_MCP_MARKS": str(marks),
                "PYTHONPATH": str(ROOT),
                "FAKE_MCP_INSTRUCTIONS": "Call fake__echo before anything else.",
            },
            "allow": ["whoami", "ask_model"],
        }
    }


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder


@pytest.fixture
async def agent(
    editor: str, workspace: Path, fake: FakeModelServer, tmp_path: Path, marks: Path
) -> AsyncIterator[EditorClient]:
    started = await start_editor(
        editor,
        [workspace],
        settings_for(fake, mode="agent", mcpServers=servers(marks)),
        env={
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "OPENAI_API_KEY": "",
        },
    )
    yield started
    await started.shutdown_session()


async def test_the_model_calls_an_mcp_tool_after_the_user_approves(
    agent: EditorClient, fake: FakeModelServer
) -> None:
    agent.state.answer = "Allow"
    fake.script(
        tool_reply(("fake__echo", {"text": "bonjour"})),
        tool_reply(("fake__boom", {})),
        text_reply("Done."),
    )

    result = await agent.command("rhema.turn", {"prompt": "echo bonjour"})

    assert result["stopReason"] == "end_turn"
    offered = [tool["function"]["name"] for tool in fake.requests[0]["tools"]]
    assert "fake__echo" in offered and "run_command" in offered
    echoed = fake.requests[1]["messages"][-1]["content"]
    assert echoed == "echo: bonjour"
    results = agent.events_of("tool_result")
    assert [(r["name"], r["isError"]) for r in results] == [
        ("fake__echo", False),
        ("fake__boom", True),
    ]
    assert [q.message for q in agent.state.questions if "MCP tool echo" in q.message]
    status = await agent.command("rhema.status")
    assert [(s["name"], s["state"], s["tools"]) for s in status["mcpServers"]] == [
        ("fake", "ready", 17)
    ]


async def test_a_denied_call_is_an_in_band_error(
    agent: EditorClient, fake: FakeModelServer
) -> None:
    agent.state.answer = "Deny"
    fake.script(tool_reply(("fake__echo", {"text": "x"})), text_reply("Understood."))

    result = await agent.command("rhema.turn", {"prompt": "echo x"})

    assert result["stopReason"] == "end_turn"
    refused = fake.requests[1]["messages"][-1]["content"]
    assert "did not approve" in refused


async def test_edit_mode_starts_no_server(
    agent: EditorClient, fake: FakeModelServer, marks: Path
) -> None:
    fake.script(text_reply("Nothing to do."))

    await agent.command("rhema.turn", {"prompt": "hi", "mode": "edit"})

    offered = [tool["function"]["name"] for tool in fake.requests[0]["tools"]]
    assert not [name for name in offered if name.startswith("fake__")]
    assert not (marks / "starts").exists()
    status = await agent.command("rhema.status")
    assert [(s["name"], s["state"]) for s in status["mcpServers"]] == [("fake", "idle")]


async def test_mcp_restart_restarts_a_server_by_name(agent: EditorClient, marks: Path) -> None:
    restarted = await agent.command("rhema.mcpRestart", {"name": "fake"})

    assert [(s["name"], s["state"], s["tools"]) for s in restarted] == [("fake", "ready", 17)]
    again = await agent.command("rhema.mcpRestart", {"name": "fake"})
    assert [s["state"] for s in again] == ["ready"]
    assert len((marks / "starts").read_text().splitlines()) == 2
    with pytest.raises(Exception, match="no MCP server named 'nope'"):
        await agent.command("rhema.mcpRestart", {"name": "nope"})


async def test_a_servers_sampling_request_goes_to_the_session_model_once_approved(
    agent: EditorClient, fake: FakeModelServer
) -> None:
    agent.state.answer = "Allow"
    fake.script(
        tool_reply(("fake__ask_model", {"question": "Capital of France?"})),
        text_reply("Paris"),  # the server's sampling request, through the session's model
        text_reply("It said Paris."),
    )

    result = await agent.command("rhema.turn", {"prompt": "ask the server"})

    assert result["stopReason"] == "end_turn"
    first, sampled, last = fake.requests
    system = first["messages"][0]["content"]
    assert "Instructions from the MCP server fake (the server's own words" in system
    assert "Call fake__echo before anything else." in system
    assert sampled["messages"][-1] == {"role": "user", "content": "Capital of France?"}
    assert "tools" not in sampled and sampled["messages"][0]["content"] == "Answer in one word."
    assert last["messages"][-1]["content"] == "the model said: Paris (fake-model)"
    assert [q.message for q in agent.state.questions if "asks to use the model" in q.message]


async def test_the_servers_prompts_are_slash_commands(agent: EditorClient) -> None:
    listed = await agent.command("rhema.mcpPrompts")

    assert listed == [
        {
            "server": "fake",
            "name": "review",
            "title": "review",
            "description": "Asks for a review of one file.",
            "arguments": [
                {"name": "path", "description": "", "required": True},
                {"name": "focus", "description": "", "required": False},
            ],
            "command": "mcp__fake__review",
        }
    ]
    filled = await agent.command(
        "rhema.mcpPrompt", {"server": "fake", "name": "review", "arguments": {"path": "a.py"}}
    )
    assert filled == {"text": "Review a.py, looking for bugs."}
    with pytest.raises(Exception, match="path"):
        await agent.command("rhema.mcpPrompt", {"server": "fake", "name": "review"})


async def test_the_servers_resources_are_listed_and_attached_as_context(
    editor: str, workspace: Path, fake: FakeModelServer, tmp_path: Path, marks: Path
) -> None:
    configured = servers(marks)
    configured["gone"] = {"command": str(tmp_path / "no-such-server")}
    started = await start_editor(
        editor,
        [workspace],
        settings_for(fake, mode="agent", mcpServers=configured),
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "c")},
    )
    try:
        listed = await started.command("rhema.mcpResources")
        fake.script(text_reply("Read it."))
        result = await started.command(
            "rhema.turn",
            {
                "prompt": "what do the notes say?",
                "mode": "edit",
                "context": [{"server": "fake", "uri": "fake://notes/readme"}],
            },
        )
        with pytest.raises(Exception, match=r"fake://nope.*could not be read"):
            await started.command(
                "rhema.turn",
                {"prompt": "and this?", "context": [{"server": "fake", "uri": "fake://nope"}]},
            )
        with pytest.raises(Exception, match="MCP server gone is not running"):
            await started.command(
                "rhema.turn",
                {"prompt": "and this?", "context": [{"server": "gone", "uri": "fake://x"}]},
            )
    finally:
        await started.shutdown_session()

    assert listed["resources"] == [
        {"server": "fake", "uri": "fake://notes/readme", "name": "readme", "mimeType": "text/plain"}
    ]
    assert [f["server"] for f in listed["failed"]] == ["gone"]
    assert "gone is failed" in listed["failed"][0]["error"]
    assert "no-such-server" in listed["failed"][0]["error"]
    assert listed["truncated"] is False
    assert result["stopReason"] == "end_turn"
    sent = fake.requests[0]["messages"][-1]["content"]
    assert "what do the notes say?" in sent
    assert "fake://notes/readme (MCP server fake)" in sent
    assert "the readme of the notes: read me first" in sent
    assert len(fake.requests) == 1  # the refused prompts reached no model


async def test_150_tools_never_make_a_request_over_128(
    editor: str, workspace: Path, fake: FakeModelServer, tmp_path: Path, marks: Path
) -> None:
    many = servers(marks)
    many["fake"]["env"]["FAKE_MCP_MANY"] = "150"
    many["fake"]["allow"] = ["*"]
    started = await start_editor(
        editor,
        [workspace],
        settings_for(fake, mode="agent", mcpServers=many),
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "c")},
    )
    try:
        fake.script(
            tool_reply(("find_tools", {"query": "celsius fahrenheit"})),
            tool_reply(("fake__tool_042", {"value": "20"})),
            text_reply("68 F."),
        )
        result = await started.command("rhema.turn", {"prompt": "20 C in F?"})
        status = await started.command("rhema.status")
    finally:
        await started.shutdown_session()

    assert result["stopReason"] == "end_turn"
    sizes = [len(request["tools"]) for request in fake.requests]
    assert max(sizes) <= 128, sizes
    names = [[t["function"]["name"] for t in request["tools"]] for request in fake.requests]
    assert "find_tools" in names[0] and "fake__tool_042" not in names[0]
    assert "fake__tool_042" in names[1]
    assert fake.requests[2]["messages"][-1]["content"] == "tool 42 answered 20"
    [server] = status["mcpServers"]
    assert (server["tools"], server["deferred"]) == (167, True)
