"""Waiting and failing in the chat, in real VS Code (code-server), against the real server:
a working line until the model's first token; a provider's retries in one notice that
counts down and then says how it went; an error in plain words (what failed and the fix
first, the server's message behind Details) with a Retry that continues the same turn; and
"waiting for your approval" while a review or a command's approval waits. Screenshots go to
``test-artifacts/vscode/``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.editors.vscode.conftest import VSCode, release, user_texts
from tests.fakes.model_server import FakeModelServer, error_reply, text_reply, tool_reply

pytestmark = pytest.mark.timeout(900)

CHAT = {"in": "chat"}
PROMPT = "Explain hello.py"
OVERLOADED = error_reply(503, headers={"retry-after-ms": "400"})


def chat(step: dict[str, Any]) -> dict[str, Any]:
    return {**step, **CHAT}


def send(prompt: str) -> list[dict[str, Any]]:
    return [chat({"click": "#input"}), {"typeText": prompt}, {"press": "Enter"}]


# No file is edited or saved: code-server's default auto save only.
def test_retries_count_down_an_error_says_what_to_do_and_retry_continues_the_turn(
    vscode: VSCode, model: FakeModelServer, artifacts: Path
) -> None:
    # Four attempts, all overloaded: the server gives up; then the model is back, and says
    # nothing until the test has seen the working line (it holds before its first piece).
    model.script(OVERLOADED, OVERLOADED, OVERLOADED, OVERLOADED)
    model.script(text_reply("Back again, with the answer.", chunk=3, hold=0))
    retry_shot = artifacts / "chat-retry-waiting.png"
    error_shot = artifacts / "chat-error.png"
    waiting_shot = artifacts / "chat-waiting-for-the-model.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            *send(PROMPT),
            chat({"waitFor": ".notice.retry.waiting"}),
            chat({"query": ".notice.retry"}),
            {"screenshot": str(retry_shot)},
            chat({"waitFor": ".notice.error .headline"}),
            chat({"query": ".notice.retry"}),
            chat({"query": ".notice.error"}),
            chat({"query": ".notice.error details .text"}),
            chat({"click": ".notice.error details summary"}),
            {"screenshot": str(error_shot)},
            chat({"click": ".notice.error .retry"}),
            chat({"waitFor": "#working", "hasText": "Waiting for the model"}),
            chat({"query": "#working"}),
            {"screenshot": str(waiting_shot)},
            release(model),
            chat({"waitFor": ".answer", "hasText": "Back again, with the answer."}),
            chat({"waitFor": ".end"}),
            chat({"query": "#working"}),
            chat({"query": ".user"}),
        ],
        timeout_s=120,
    )
    queries = [step["elements"] for step in steps if "query" in step]
    (waiting,), retries, (error,), (detail,), (working,), (done,), prompts = queries
    counting = r"Attempt [123] of 4 failed; retrying in \d+\.\ds: custom answered HTTP 503"
    assert re.match(counting, waiting["text"]), waiting
    # One notice for every attempt of the stretch, ended when the run gave up.
    (settled,) = retries
    assert "failed" in settled["classes"] and settled["text"].startswith("Gave up after 4 attempts")
    assert error["text"].startswith(
        "The provider had a problem on its side (HTTP 503).Retry in a moment."
    )
    assert "answered HTTP 503" in detail["text"] and "gave up after 4 attempts" in detail["text"]
    assert working["text"] == "Waiting for the model…"
    assert working["data"]["what"] == "model"
    assert done["text"] == ""  # the line went away with the first token
    assert [p["text"] for p in prompts] == [PROMPT]  # Retry sent no second prompt
    # The retry continued the same turn: the model saw the prompt once.
    assert len(model.requests) == 5
    assert user_texts(model.requests[4]) == user_texts(model.requests[0])
    assert len(user_texts(model.requests[4])) == 1
    assert all(shot.stat().st_size > 0 for shot in (retry_shot, error_shot, waiting_shot))


@pytest.mark.parametrize("extra_settings", [{"rhema.review": True}])
def test_a_review_waits_for_your_approval_in_the_chat(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    (vscode.workspace / "v.py").write_text("a = 1\n")
    model.script(
        tool_reply(("write_file", {"path": "v.py", "content": "a = 2\n"})), text_reply("Done.")
    )
    shot = artifacts / "chat-waiting-for-review.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            *send("Change v.py"),
            {"waitFor": ".monaco-list-row[aria-level='2'] input.edit-checkbox"},
            chat({"waitFor": "#working", "hasText": "Waiting for your approval"}),
            chat({"query": "#working"}),
            chat({"query": ".tool .status"}),
            {"screenshot": str(shot)},
            {"click": ".monaco-button", "hasText": "Apply"},
            chat({"waitFor": ".end"}),
            chat({"query": "#working"}),
        ],
        timeout_s=120,
    )
    (working,), (status,), (after,) = [step["elements"] for step in steps if "query" in step]
    assert working["text"] == (
        "Waiting for your approval: review the changes in the Refactor Preview"
    )
    assert status["text"] == "waiting for your approval"
    assert after["text"] == ""
    assert shot.stat().st_size > 0


@pytest.mark.parametrize("extra_settings", [{"rhema.mode": "agent"}])
def test_a_command_waits_for_your_approval_in_the_chat(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    model.script(
        tool_reply(("run_command", {"command": "echo approved", "escalate": True})),
        text_reply("It ran."),
    )
    shot = artifacts / "chat-waiting-for-command-approval.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            *send("Run echo"),
            chat({"waitFor": "#working", "hasText": "Waiting for your approval"}),
            chat({"query": "#working"}),
            {"screenshot": str(shot)},
            {"click": ".notification-toast .monaco-button", "hasText": "Run"},
            chat({"waitFor": ".answer", "hasText": "It ran."}),
            chat({"query": "#working"}),
            chat({"query": ".tool"}),
        ],
        timeout_s=120,
    )
    (working,), (after,), (card,) = [step["elements"] for step in steps if "query" in step]
    assert working["text"].startswith("Waiting for your approval: Rhema wants to run a command in ")
    assert working["text"].endswith(": echo approved (answer in the notification)")
    assert after["text"] == ""
    assert "done (exit 0)" in card["text"]
    assert "approved" in card["text"]  # the command's output
    assert shot.stat().st_size > 0
