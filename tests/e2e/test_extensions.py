"""Skills and custom slash commands through the headless client as a user
runs it (a real ``rhema-lsp ask`` child process, its real server, the fake
model over loopback): ``ask "/greet Ann"`` sends the expanded template (the
command from ``.claude/commands``), a workspace skill's name and description
are in the first request and its body only in the request after the
``skill`` call; ``rhema-lsp status`` lists both."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import start_editor
from tests.e2e.test_cli import ENTRY, ask_command, run
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

BODY = "Write release notes: one line per change, newest first."


def test_ask_expands_a_custom_command_and_loads_a_skill_only_when_called(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    commands = workspace / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(
        "---\ndescription: Greet someone\nargument-hint: NAME\n---\n"
        "Say a warm hello to $1 (asked: $ARGUMENTS).\n"
    )
    skill = workspace / ".claude" / "skills" / "release-notes" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(f"---\nname: release-notes\ndescription: Draft release notes.\n---\n{BODY}\n")
    fake.script(
        tool_reply(("skill", {"name": "release-notes"})),
        text_reply("Hello, Ann!"),
    )

    done = run(ask_command(fake, workspace, "/greet Ann"), tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, Ann!\n"
    first, second = fake.requests
    user = [m for m in first["messages"] if m["role"] == "user"]
    assert user[-1]["content"] == "Say a warm hello to Ann (asked: Ann)."
    system = first["messages"][0]["content"]
    assert "- release-notes: Draft release notes." in system
    assert BODY not in json.dumps(first)
    assert BODY in json.dumps(second["messages"][-1])

    asked = ask_command(fake, workspace, "--json")
    status = run([*ENTRY, "status", *asked[len(ENTRY) + 1 :]], tmp_path)
    assert status.returncode == 0, status.stderr
    listed = {(e["kind"], e["name"]) for e in json.loads(status.stdout)["extensions"]}
    assert {("command", "greet"), ("skill", "release-notes")} <= listed


def test_a_user_pre_tool_use_hook_blocks_rm_and_the_model_reads_why(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_text("x")
    config = tmp_path / "config" / "rhema-lsp" / "config.json"
    config.parent.mkdir(parents=True)
    hook = {"type": "command", "command": "echo 'no rm -rf here' >&2; exit 2"}
    config.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}))
    fake.script(tool_reply(("run_command", {"command": "rm -rf build"})), text_reply("Kept it."))

    done = run(ask_command(fake, workspace, "--mode", "agent", "--yes", "clean up"), tmp_path)

    assert done.returncode == 0, done.stderr
    assert (workspace / "build" / "out.o").exists()
    tool = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert "no rm -rf here" in tool[-1]["content"]


async def test_an_editor_lists_the_commands_with_the_servers_prompts_and_a_turn_expands_one(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    commands = workspace / ".rhema" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(
        "---\ndescription: Greet someone\nargument-hint: NAME\nmode: ask\n---\nGreet $1.\n"
    )
    editor = await start_editor(
        "visual_studio_code",
        [workspace],
        settings_for(fake, mode="edit"),
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "c")},
    )
    try:
        listed = await editor.command("rhema.mcpPrompts")
        typed = await editor.command(
            "rhema.mcpPrompt",
            {"server": "rhema:commands", "name": "greet", "arguments": {"arguments": "Ann"}},
        )
        fake.script(text_reply("Hello, Ann."))
        result = await editor.command("rhema.turn", {"prompt": typed["text"]})
    finally:
        await editor.shutdown_session()

    assert listed == [
        {
            "server": "rhema:commands",
            "name": "greet",
            "title": "",
            "description": "Greet someone",
            "arguments": [{"name": "arguments", "description": "NAME", "required": False}],
            "command": "greet",
        }
    ]
    assert typed == {"text": "/greet Ann"} and result["stopReason"] == "end_turn"
    [request] = fake.requests
    assert request["messages"][-1] == {"role": "user", "content": "Greet Ann."}
    tools = [tool["function"]["name"] for tool in request["tools"]]
    assert "edit_file" not in tools  # the command's mode: ask
