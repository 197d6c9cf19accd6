"""A plan in the Rhema chat view in real VS Code (code-server), against the real server
and a scripted model: plan mode picked in the chat's mode picker, the turn's checklist
shows under the prompt, above the answer; "Run this plan" continues the same session in
edit mode, and the checklist ticks while that turn runs; the pick stands after it
(screenshots in ``test-artifacts/vscode/``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.editors.vscode.conftest import VSCode, release, user_texts
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

pytestmark = pytest.mark.timeout(900)

HELLO = 'print("hello")\n'
HEADER = "# header added by rhema\n"
STEPS = ["Read hello.py", "Add a header"]
CHAT = {"in": "chat"}


def chat(step: dict[str, Any]) -> dict[str, Any]:
    return {**step, **CHAT}


def plan(*statuses: str) -> dict[str, Any]:
    return {
        "entries": [
            {"content": step, "status": status}
            for step, status in zip(STEPS, statuses, strict=True)
        ]
    }


def test_the_plan_ticks_in_the_chat_view_and_run_this_plan_runs_it(
    vscode: VSCode, model: FakeModelServer, artifacts: Path
) -> None:
    model.script(
        tool_reply(("update_plan", plan("pending", "pending"))),
        text_reply("Two steps: read, then add the header."),
        # "Run this plan": the first step done, the second under way until the test has
        # seen it (the next answer holds before its first piece).
        tool_reply(("update_plan", plan("completed", "in_progress"))),
        replace(
            tool_reply(
                ("edit_file", {"path": "hello.py", "old_text": HELLO, "new_text": HEADER + HELLO}),
                text="Adding the header now. " * 8,
            ),
            hold=0,
        ),
        tool_reply(("update_plan", plan("completed", "completed"))),
        text_reply("Done."),
    )
    planned_shot = artifacts / "chat-plan.png"
    ticking_shot = artifacts / "chat-plan-ticking.png"
    done_shot = artifacts / "chat-plan-done.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"waitFor": "#input"}),
            # The picker starts at rhema.mode (edit); plan is picked for the chat's prompts.
            chat({"waitFor": "#mode[data-mode='edit']"}),
            chat({"selectOption": "#mode", "hasText": "plan"}),
            chat({"waitFor": "#mode[data-mode='plan']"}),
            chat({"click": "#input"}),
            {"typeText": "Plan a header for hello.py"},
            {"press": "Enter"},
            chat({"waitFor": ".plan button.run-plan"}),
            chat({"query": "#transcript > *"}),
            chat({"query": ".plan .step"}),
            {"screenshot": str(planned_shot)},
            chat({"click": ".plan button.run-plan"}),
            chat({"waitFor": ".plan .step.in_progress", "hasText": STEPS[1]}),
            chat({"query": ".plan .step"}),
            chat({"query": ".plan button.run-plan"}),
            {"screenshot": str(ticking_shot)},
            release(model),
            chat({"waitFor": ".answer", "hasText": "Done."}),
            chat({"waitFor": ".end", "hasText": "4 steps"}),
            chat({"query": ".plan"}),
            {"screenshot": str(done_shot)},
            chat({"query": "#mode"}),
        ],
        timeout_s=180,
    )
    queried = [step["elements"] for step in steps if "query" in step]
    transcript, planned, ticking, buttons_while_running, plans, (picker,) = queried
    kinds = [element["data"].get("kind") for element in transcript]
    assert kinds[:3] == ["user", "plan", "answer"]  # the checklist above the answer
    assert [(e["text"].strip(), e["data"]["status"]) for e in planned] == [
        ("○" + STEPS[0], "pending"),
        ("○" + STEPS[1], "pending"),
    ]
    # The second turn's checklist, mid-turn: one step done, the next under way.
    assert [e["data"]["status"] for e in ticking[-2:]] == ["completed", "in_progress"]
    assert buttons_while_running == []  # no Run while a turn runs
    assert len(plans) == 2
    assert "2 of 2 done" in plans[1]["text"]
    assert "Run this plan" not in plans[1]["text"]  # all done: nothing to run
    assert picker["data"]["mode"] == "plan"  # "Run this plan" ran in edit mode, the pick stands
    # The plan turn offered no edit tool; "Run this plan" continued the session in edit mode.
    offered = [[tool["function"]["name"] for tool in r["tools"]] for r in model.requests]
    assert "edit_file" not in offered[0] and "update_plan" in offered[0]
    assert "edit_file" in offered[2]
    assert user_texts(model.requests[2])[-1] == "Carry out the plan."
    assert any(
        call["function"]["name"] == "update_plan"
        for message in model.requests[2]["messages"]
        for call in message.get("tool_calls") or []
    )
    for shot in (planned_shot, ticking_shot, done_shot):
        assert shot.stat().st_size > 0
