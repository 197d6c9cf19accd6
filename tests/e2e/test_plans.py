"""Plans through the real server: ``update_plan`` streams a ``plan`` event and
is kept in the session across a restart; plan mode offers the read tools and
``update_plan`` only; "run this plan" continues the session in edit mode with
the plan in the history; ``rhema-lsp ask`` prints it on stderr, a plain
client reads it in the transcript."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rhema_lsp.tools import TOOLS_BY_MODE
from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EDITORS, EditorClient, start_editor
from tests.e2e.test_cli import ask_command, run
from tests.e2e.test_clients import recorded_clients, started, transcript_of, until
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

PLAN = [
    {"content": "Read hello.py", "status": "completed"},
    {"content": "Make the greeting French", "status": "in_progress"},
    {"content": "Say what changed", "status": "pending"},
]


def _offered(request: Any) -> list[str]:
    return [tool["function"]["name"] for tool in request["tools"]]


async def _editor(workspace: Path, fake: FakeModelServer, tmp_path: Path) -> EditorClient:
    return await start_editor(
        EDITORS[0],
        [workspace],
        settings_for(fake, mode="edit"),
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
    )


async def test_an_update_plan_call_is_a_plan_event_kept_across_a_restart(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    ticked = [{**entry, "status": "completed"} for entry in PLAN]
    fake.script(
        tool_reply(("update_plan", {"entries": PLAN})),
        tool_reply(("update_plan", {"entries": ticked})),
        text_reply("All done."),
    )

    client = await _editor(workspace, fake, tmp_path)
    try:
        result = await client.command("rhema.turn", {"prompt": "Make it French, step by step"})
    finally:
        await client.shutdown_session()

    assert result["stopReason"] == "end_turn"
    assert [event["entries"] for event in client.events_of("plan")] == [PLAN, ticked]
    assert "update_plan" in _offered(fake.requests[0])
    answered = fake.requests[1]["messages"][-1]["content"]
    assert "1 of 3 steps completed; in progress: Make the greeting French" in answered
    session = result["session"]

    again = await _editor(workspace, fake, tmp_path)
    try:
        opened = await again.command("rhema.openSession", {"session": session})
    finally:
        await again.shutdown_session()
    assert opened["plan"] == ticked


async def test_a_bad_plan_is_refused_in_band_and_sets_nothing(
    client: EditorClient, fake: FakeModelServer
) -> None:
    fake.script(
        tool_reply(("update_plan", {"entries": [{"content": "x", "status": "maybe"}]})),
        text_reply("ok"),
    )

    result = await client.command("rhema.turn", {"prompt": "plan"})

    assert result["stopReason"] == "end_turn"
    assert client.events_of("plan") == []
    refusal = client.events_of("tool_result")[0]
    assert refusal["isError"] and "update_plan" in refusal["content"]
    assert "status" in refusal["content"]
    opened = await client.command("rhema.openSession", {"session": result["session"]})
    assert opened["plan"] is None


async def test_plan_mode_offers_read_tools_and_update_plan_and_no_edit_tool(
    client: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    fake.script(
        tool_reply(("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "bonjour"})),
        tool_reply(("update_plan", {"entries": [{**e, "status": "pending"} for e in PLAN]})),
        text_reply("The plan: three steps."),
    )

    result = await client.command("rhema.turn", {"prompt": "Plan the change", "mode": "plan"})

    assert result["stopReason"] == "end_turn"
    offered = _offered(fake.requests[0])
    assert offered == [*TOOLS_BY_MODE["plan"], "task", "update_plan"]
    refused = client.events_of("tool_result")[0]
    assert refused["isError"] and "not available in plan mode" in refused["content"]
    assert (workspace / "hello.py").read_text() == 'def greet(name):\n    return "hello " + name\n'
    assert client.state.edits == []
    assert "plan mode" in fake.requests[0]["messages"][0]["content"]
    assert len(client.events_of("plan")) == 1


async def test_running_the_plan_continues_in_edit_mode_with_the_plan_in_the_history(
    client: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    path = workspace / "hello.py"
    client.open(path, path.read_text())
    pending = [{**entry, "status": "pending"} for entry in PLAN]
    fake.script(
        tool_reply(("update_plan", {"entries": pending})),
        text_reply("Plan ready."),
        tool_reply(
            ("update_plan", {"entries": [{**pending[0], "status": "in_progress"}, *pending[1:]]}),
            ("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": '"bonjour "'}),
        ),
        tool_reply(("update_plan", {"entries": [{**e, "status": "completed"} for e in PLAN]})),
        text_reply("Done."),
    )
    planned = await client.command("rhema.turn", {"prompt": "Plan it", "mode": "plan"})
    session = planned["session"]

    ran = await client.command("rhema.turn", {"prompt": "go", "session": session, "mode": "edit"})

    assert ran["stopReason"] == "end_turn" and ran["session"] == session
    run_request = fake.requests[2]
    assert "edit_file" in _offered(run_request)
    calls = [
        call["function"]
        for message in run_request["messages"]
        for call in message.get("tool_calls") or []
    ]
    assert calls[0]["name"] == "update_plan" and "Make the greeting French" in calls[0]["arguments"]
    assert client.buffer(path).text == 'def greet(name):\n    return "bonjour " + name\n'
    statuses = [[e["status"] for e in event["entries"]] for event in client.events_of("plan")]
    assert statuses[0] == ["pending"] * 3
    assert statuses[-1] == ["completed"] * 3


def test_ask_prints_the_plan_then_a_line_per_tick_and_continue_runs_it(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    pending = [{**entry, "status": "pending"} for entry in PLAN]
    first = [{**pending[0], "status": "completed"}, *pending[1:]]
    fake.script(
        tool_reply(("update_plan", {"entries": pending})),
        text_reply("Plan ready."),
        tool_reply(("update_plan", {"entries": first})),
        tool_reply(
            ("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": '"bonjour "'})
        ),
        tool_reply(("update_plan", {"entries": [{**e, "status": "completed"} for e in PLAN]})),
        text_reply("Done."),
    )

    planned = run(ask_command(fake, workspace, "--mode", "plan", "make it French"), tmp_path)

    assert planned.returncode == 0, planned.stderr
    assert planned.stdout == "Plan ready.\n"
    assert "plan (0/3 done):\n  [ ] Read hello.py\n  [ ] Make the greeting French\n" in (
        planned.stderr
    )
    assert "update_plan" not in planned.stderr
    assert _offered(fake.requests[0]) == [*TOOLS_BY_MODE["plan"], "task", "update_plan"]

    ran = run(ask_command(fake, workspace, "--continue", "--mode", "edit", "go"), tmp_path)

    assert ran.returncode == 0, ran.stderr
    # A new process shows the plan whole once, then a line per step ticked.
    assert "plan (1/3 done):\n  [x] Read hello.py\n  [ ] Make the greeting French\n" in ran.stderr
    ticks = [line for line in ran.stderr.splitlines() if line.startswith("[x] ")]
    assert ticks == [
        "[x] Make the greeting French (3/3 done)",
        "[x] Say what changed (3/3 done)",
    ]
    assert (
        workspace / "hello.py"
    ).read_text() == 'def greet(name):\n    return "bonjour " + name\n'
    history = fake.requests[2]["messages"]
    assert any(
        call["function"]["name"] == "update_plan"
        for message in history
        for call in message.get("tool_calls") or []
    )


async def test_a_plain_client_reads_the_plan_as_a_task_list_in_the_transcript(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    editor = recorded_clients()[0]
    client = await started(editor, None, workspace, fake, tmp_path)
    ticked = [{**PLAN[0]}, {**PLAN[1], "status": "completed"}, PLAN[2]]
    fake.script(
        tool_reply(("update_plan", {"entries": PLAN})),
        tool_reply(("update_plan", {"entries": ticked})),
        text_reply("Half way."),
    )
    try:
        result = await client.command("rhema.turn", {"prompt": "French, please"})
        await until(
            "the closing message", lambda: any("Half way." in m.message for m in client.messages)
        )
    finally:
        await client.shutdown_session()

    text = transcript_of(workspace, result["session"]).read_text(encoding="utf-8")
    assert text.count("**Plan**") == 1  # ticked in place
    assert (
        "**Plan**\n\n- [x] Read hello.py\n- [x] Make the greeting French\n- [ ] Say what changed\n"
        in text
    )
    assert "update_plan" not in text
