"""A workspace's own slash command and a subagent, seen by a client on the
official ACP TypeScript SDK (tests/acp/ts_client, scenario ``extensions``):
``.claude/commands/greet.md`` arrives in ``available_commands_update`` with
its description and hint, the client runs it as ``/greet Ann`` and the model
gets the expanded template; a prompt whose model calls ``task`` shows the
child's steps and answer as content updates of the ``task`` tool call, its
result the child's answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp.test_typescript_client import drive
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply


def texts(update: dict[str, Any]) -> str:
    return "\n".join(
        c["content"]["text"] for c in update.get("content") or [] if c["type"] == "content"
    )


async def test_a_custom_command_arrives_and_runs_and_a_subagent_shows_in_its_task_call(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    commands = workspace / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(
        "---\ndescription: Greet someone\nargument-hint: NAME\n---\nGreet $ARGUMENTS warmly.\n"
    )
    fake.script(
        text_reply("Hello, Ann!"),
        tool_reply(("task", {"description": "find greet", "prompt": "CHILD: find greet"})),
        tool_reply(("read_file", {"path": "hello.py"})),
        text_reply("CHILD-ANSWER: greet is in hello.py", chunk=6),
        text_reply("It is in hello.py."),
    )
    seen = await drive("extensions", fake, state, workspace)

    r = seen["results"]
    greet = next(c for c in r["commands"] if c["name"] == "greet")
    assert greet["description"] == "Greet someone"
    assert greet["input"] == {"hint": "NAME"}
    assert r["greeted"]["stopReason"] == "end_turn"
    users = [m["content"] for m in fake.requests[0]["messages"] if m["role"] == "user"]
    assert users[-1] == "Greet Ann warmly."

    assert r["tasked"]["stopReason"] == "end_turn"
    updates = seen["updates"]
    [start] = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert start["title"] == "Task"
    task = start["toolCallId"]
    ours = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    ours = [u for u in ours if u["toolCallId"] == task]
    shown = [texts(u) for u in ours if u.get("content")]
    assert any("read_file" in text for text in shown[:-1])  # the child's step, live
    assert any("CHILD-ANSWER" in text for text in shown[:-1])
    assert ours[-1]["status"] == "completed"
    assert "✓ read_file hello.py" in shown[-1] and "CHILD-ANSWER" in shown[-1]
    child = next(request for request in fake.requests if "CHILD: find greet" in str(request))
    assert "Greet Ann" not in str(child)
