"""The packaged extension in real VS Code (code-server), driven headless, against the real
``rhema-lsp`` server and a scripted model.

Every expectation is built from what the test scripted on the fake model (``model``) and
checked in what the real server did with it: the "Rhema" output channel (read from the
extension host's log of the channel), documents (read back from disk after "File: Save"),
and the requests the model received.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rhema_lsp import __version__
from rhema_lsp.tools import TOOLS_BY_MODE
from tests.editors.vscode.conftest import FAKE_MODEL, VSCode, user_texts
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

# The first test may install code-server (apt, npm, native rebuilds) from scratch.
pytestmark = pytest.mark.timeout(900)

REASONING = "The user greets me.\nA short friendly answer fits."
ANSWER = "Hello from the fake model. Streaming works end to end."
HELLO = 'print("hello")\n'
USER_LINE = "# unsaved user line"
HEADER = "# header added by rhema\n"
EDIT_CALL = ("edit_file", {"path": "hello.py", "old_text": HELLO, "new_text": HEADER + HELLO})
EDIT_ANSWER = "Added a header line."
# Code actions come from the server: asking for them before it runs gets none (the menu
# would show only VS Code's own), so the driver waits for the status bar to say so first.
SERVER_RUNNING = {"waitStatus": "Rhema", "not": ["starting", "stopped"]}
# On a loaded machine a request sent right after that may still come back empty, and VS Code
# does not ask again for the same selection: the driver's `openActions` step reselects and
# reopens the menu until the server's row is there.


def reasoning_lines(text: str) -> str:
    """How reasoning shows in the channel: each line set apart."""
    return "".join(f"│ {line}\n" for line in text.splitlines())


def test_show_status_reports_the_configured_provider(
    vscode: VSCode, model: FakeModelServer
) -> None:
    steps = vscode.drive(
        [
            {"command": "Rhema: Show Status"},
            {"waitLog": "Rhema", "contains": "  session: "},
            # The whole status, readable in a tab of its own (not a pop-up cut short).
            {"waitFor": ".tab", "hasText": "Rhema Status.md"},
            {"waitFor": ".editor-instance .view-lines", "hasText": "## Language tools"},
            {"query": ".editor-instance .view-lines"},
        ]
    )
    text = steps[1]["text"]
    assert (
        f"ℹ Rhema {__version__} · custom / {FAKE_MODEL} (custom rhema.baseUrl (openai), no key)"
        f" · mode edit · completion off\n  base URL: {model.base_url}\n"
        f"  folders: {vscode.workspace}\n  session: (new)\n"
    ) in text
    (view,) = steps[-1]["elements"]
    shown = view["text"].replace("\u00a0", " ")
    assert "# Rhema status" in shown and "## Project rules" in shown
    assert f"- **Provider**: custom / {FAKE_MODEL}" in shown
    assert model.requests == []


def test_ask_streams_reasoning_and_answer_into_the_channel(
    vscode: VSCode, model: FakeModelServer, artifacts: Path
) -> None:
    model.script(text_reply(ANSWER, thinking=REASONING, chunk=3, delay=0.04, usage=(42, 17)))
    shot = artifacts / "ask-mid-stream.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Ask"},
            {"input": "Say hello", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "│ The user"},
            {"screenshot": str(shot)},
            {"waitLog": "Rhema", "contains": "■ "},
        ]
    )
    mid, text = steps[2]["text"], steps[-1]["text"]
    assert "■ " not in mid  # the screenshot was taken mid-stream
    assert (
        f"▶ Ask: Say hello\n{reasoning_lines(REASONING)}{ANSWER}\n"
        "■ end_turn · 1 step · 42 in · 17 out tokens\n"
    ) in text
    assert shot.stat().st_size > 0
    (request,) = model.requests
    assert request["model"] == FAKE_MODEL
    assert user_texts(request) == ["Say hello"]


def test_edit_turn_changes_an_unsaved_editor_and_undo_reverts_it(
    vscode: VSCode, model: FakeModelServer
) -> None:
    model.script(tool_reply(EDIT_CALL, usage=(30, 12)), text_reply(EDIT_ANSWER, usage=(50, 5)))
    hello = vscode.workspace / "hello.py"
    unsaved = f"{HELLO}{USER_LINE}\n"
    edited = f"{HEADER}{HELLO}{USER_LINE}\n"
    steps = vscode.drive(
        [
            {"openFile": "hello.py"},
            {"press": "Control+End"},
            {"typeText": f"{USER_LINE}\n"},
            {"command": "Rhema: Ask"},
            {"input": "Add a header to hello.py", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "■ "},
            {"command": "File: Save"},
            {"waitFile": str(hello), "equals": edited},
            {"clickEditor": True},
            {"press": "Control+Z"},
            {"command": "File: Save"},
            {"waitFile": str(hello), "equals": unsaved},
        ]
    )
    assert (
        "▶ Ask: Add a header to hello.py\n🔧 edit_file hello.py ✓\n"
        f"{EDIT_ANSWER}\n■ end_turn · 2 steps · 80 in · 17 out tokens\n"
    ) in steps[5]["text"]
    assert steps[7]["text"] == edited
    assert steps[-1]["text"] == unsaved
    first, second = model.requests
    # The server read the editor's unsaved buffer (the active editor goes as context) ...
    assert USER_LINE in user_texts(first)[0]
    # ... and told the model the edit applied.
    (result,) = [m for m in second["messages"] if m["role"] == "tool"]
    assert result["tool_call_id"] == "call_1"
    assert "error" not in str(result["content"]).lower()


def test_undo_last_turn_reverts_the_turn_through_the_server(
    vscode: VSCode, model: FakeModelServer
) -> None:
    model.script(tool_reply(EDIT_CALL), text_reply(EDIT_ANSWER))
    hello = vscode.workspace / "hello.py"
    steps = vscode.drive(
        [
            {"openFile": "hello.py"},
            {"command": "Rhema: Ask"},
            {"input": "Add a header to hello.py", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "■ "},
            {"command": "File: Save"},
            {"waitFile": str(hello), "equals": HEADER + HELLO},
            {"command": "Rhema: Undo Last Turn"},
            {"waitLog": "Rhema", "contains": "↶ Undo"},
            {"command": "File: Save"},
            {"waitFile": str(hello), "equals": HELLO},
        ]
    )
    assert "🔧 edit_file hello.py ✓\n" in steps[3]["text"]
    assert steps[7]["text"].endswith("↶ Undo: reverted 1 file(s)\n")
    assert steps[-1]["text"] == HELLO
    assert len(model.requests) == 2  # undoing asks nothing of the model


CANCEL_BY_PALETTE = {"command": "Rhema: Cancel"}
CANCEL_BY_STOP = {"click": "#stop", "in": "chat"}  # Ask runs in the chat: its Stop button
STORY = " ".join(f"word{i}" for i in range(200))


@pytest.mark.parametrize(
    "cancel", [CANCEL_BY_PALETTE, CANCEL_BY_STOP], ids=["palette", "chat-stop"]
)
def test_cancel_mid_stream_stops_the_run(
    vscode: VSCode, model: FakeModelServer, cancel: dict[str, str]
) -> None:
    model.script(text_reply(STORY, chunk=6, delay=0.15))
    steps = vscode.drive(
        [
            {"command": "Rhema: Ask"},
            {"input": "Tell a long story", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "word3"},
            cancel,
            {"waitLog": "Rhema", "contains": "■ "},
            # Anything the run still sent would land before this status line.
            {"command": "Rhema: Show Status"},
            {"waitLog": "Rhema", "contains": "ℹ Rhema"},
        ]
    )
    # The server closed the model's stream ...
    assert model.client_closed.wait(timeout=10)
    text = steps[-1]["text"]
    match = re.search(
        r"▶ Ask: Tell a long story\n(?P<answer>.*)\n"
        r"■ cancelled · \d+ steps? · [\d,]+ in · [\d,]+ out tokens\nℹ Rhema ",
        text,
        re.DOTALL,
    )
    assert match is not None, text
    answer = match["answer"]
    # ... the panel kept what streamed, a prefix of the story, and nothing after the
    # closing line; the server answered the request normally ("cancelled"), not an error.
    assert answer.startswith("word0 word1 word2 word3")
    assert STORY.startswith(answer)
    assert len(answer) < len(STORY)
    assert "✖" not in text
    assert len(model.requests) == 1


def test_open_session_lists_and_reopens_a_session(vscode: VSCode, model: FakeModelServer) -> None:
    model.script(
        text_reply(ANSWER, thinking=REASONING, chunk=8), text_reply("Second answer.", chunk=8)
    )
    steps = vscode.drive(
        [
            {"command": "Rhema: Ask"},
            {"input": "First question", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "■ end_turn"},
            {"command": "Rhema: New Session"},
            {"command": "Rhema: Open Session…"},
            {"input": "First question", "title": "Rhema: Open Session"},
            {"waitLog": "Rhema", "contains": "▶ Session: First question"},
            {"command": "Rhema: Ask"},
            {"input": "Second question", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "Second answer.\n■ "},
        ]
    )
    assert (
        "▶ New session\n▶ Session: First question\nyou: First question\n"
        f"{reasoning_lines(REASONING)}rhema: {ANSWER}\n▶ Ask: Second question\n"
    ) in steps[-1]["text"]
    # The second question continued the reopened session: the model saw its history.
    first, second = model.requests
    assert user_texts(first) == ["First question"]
    assert user_texts(second) == ["First question", "Second question"]
    assert [m["content"] for m in second["messages"] if m["role"] == "assistant"] == [ANSWER]


def test_edit_selection_rewrites_the_selection(vscode: VSCode, model: FakeModelServer) -> None:
    model.script(text_reply('print("hello, world")', usage=(20, 6)))
    hello = vscode.workspace / "hello.py"
    rewritten = 'print("hello, world")\n'
    steps = vscode.drive(
        [
            {"openFile": "hello.py"},
            {"press": "Shift+End"},
            {"command": "Rhema: Edit Selection", "keepFocus": True},
            {"input": "Greet the world", "title": "Rhema: Edit Selection"},
            {"waitLog": "Rhema", "contains": "■ "},
            {"command": "File: Save"},
            {"waitFile": str(hello), "equals": rewritten},
        ]
    )
    assert (
        '▶ Edit selection: Greet the world\nprint("hello, world")\n'
        "■ end_turn · 1 step · 20 in · 6 out tokens\n"
    ) in steps[4]["text"]
    assert steps[-1]["text"] == rewritten
    (request,) = model.requests
    prompt = user_texts(request)[0]
    assert "Greet the world" in prompt
    assert 'print("hello")' in prompt


def test_edit_selection_code_action_passes_its_target(
    vscode: VSCode, model: FakeModelServer
) -> None:
    """The server's "Rhema: edit selection" code action runs the extension's
    ``rhema.editSelection`` with its ``{uri, range}``."""
    model.script(text_reply('print("hi")'))
    hello = vscode.workspace / "hello.py"
    vscode.drive(
        [
            {"openFile": "hello.py"},
            SERVER_RUNNING,
            {
                "openActions": "Rhema: edit selection",
                "select": ["Shift+End"],
                "via": {"command": "Refactor..."},
            },
            {"pickAction": "Rhema: edit selection"},
            {"input": "Say hi", "title": "Rhema: Edit Selection"},
            {"waitLog": "Rhema", "contains": "■ "},
            {"command": "File: Save"},
            {"waitFile": str(hello), "equals": 'print("hi")\n'},
        ]
    )
    assert len(model.requests) == 1


def test_explain_selection_code_action_streams_an_ask_turn(
    vscode: VSCode, model: FakeModelServer
) -> None:
    """The server's "Rhema: explain selection" code action names ``rhema.turn``; the
    extension serves it as a rendered ask-mode run."""
    model.script(text_reply(ANSWER, usage=(12, 3)))
    steps = vscode.drive(
        [
            {"openFile": "hello.py"},
            SERVER_RUNNING,
            {"openActions": "Rhema: explain selection", "select": ["Shift+End"]},
            {"pickAction": "Rhema: explain selection"},
            {"waitLog": "Rhema", "contains": "■ "},
        ]
    )
    assert (
        f"▶ Ask: Explain the selected code.\n{ANSWER}\n■ end_turn · 1 step · 12 in · 3 out tokens\n"
    ) in steps[-1]["text"]
    (request,) = model.requests
    assert 'print("hello")' in user_texts(request)[0]
    tools = sorted(tool["function"]["name"] for tool in request["tools"])
    assert tools == sorted([*TOOLS_BY_MODE["ask"], "task", "update_plan"])  # ask mode: no edit tool
