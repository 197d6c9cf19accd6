"""The packaged extension in real VS Code (code-server), driven headless.

Channel text is read from the extension host's log of the "Rhema" output channel. The
default server is the stand-in ``fake_server.py``; see conftest.py to point the same tests
at the real ``rhema-lsp``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.vscode.conftest import VSCode
from tests.editors.vscode.fake_server import ANSWER, EDIT_LINE, REASONING, VERSION

# The first test may install code-server (apt, npm, native rebuilds) from scratch.
pytestmark = pytest.mark.timeout(900)


@pytest.mark.parametrize(
    "extra_settings", [{"rhema.model": "tiny-model", "rhema.mode": "agent", "rhema.maxSteps": 3}]
)
def test_show_status_activates_the_extension_and_reaches_the_server(vscode: VSCode) -> None:
    steps = vscode.drive(
        [
            {"command": "Rhema: Show Status"},
            {"waitLog": "Rhema", "contains": "ℹ Rhema "},
            {"waitLog": "Rhema Server", "contains": "fake: client executeCommand capability:"},
        ]
    )
    text = steps[1]["text"]
    # The built-in ExecuteCommand feature is dropped: the server's command ids are never
    # registered as VS Code commands, so they cannot clash with the extension's own.
    assert "fake: client executeCommand capability: None" in steps[2]["text"]
    assert f"ℹ Rhema {VERSION} · fake / tiny-model (stand-in) · mode agent" in text


def test_ask_streams_reasoning_and_answer_into_the_channel(vscode: VSCode, artifacts: Path) -> None:
    shot = artifacts / "ask-mid-stream.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Ask"},
            {"input": "Say hello", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "│ "},
            {"screenshot": str(shot)},
            {"waitLog": "Rhema", "contains": "■ end_turn"},
        ]
    )
    text = steps[-1]["text"]
    reasoning = "".join(f"│ {line}\n" for line in REASONING.splitlines())
    assert f"▶ Ask: Say hello\n{reasoning}{ANSWER}\n■ end_turn · 1 step · 42 in · " in text
    assert shot.stat().st_size > 0


CANCEL_BY_PALETTE = {"command": "Rhema: Cancel"}
CANCEL_BY_NOTIFICATION = {"click": ".notification-toast .monaco-button", "hasText": "Cancel"}


@pytest.mark.parametrize(
    "cancel", [CANCEL_BY_PALETTE, CANCEL_BY_NOTIFICATION], ids=["palette", "notification"]
)
def test_cancel_mid_stream_stops_the_run(vscode: VSCode, cancel: dict[str, str]) -> None:
    steps = vscode.drive(
        [
            {"command": "Rhema: Ask"},
            {"input": "slow story", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "word3"},
            cancel,
            {"waitLog": "Rhema", "contains": "■ cancelled"},
            {"waitLog": "Rhema Server", "contains": "fake: cancel by $/cancelRequest"},
        ]
    )
    text = steps[4]["text"]
    answer = text.split("│ A short friendly answer fits.\n", 1)[1].split("\n■ cancelled", 1)[0]
    assert answer.startswith("word0 word1 word2 word3")
    # Stopped well before the stand-in's 200 words, through the request's own token.
    assert "word199" not in answer


def test_open_session_lists_and_reopens_a_session(vscode: VSCode) -> None:
    steps = vscode.drive(
        [
            {"command": "Rhema: Ask"},
            {"input": "First question", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "■ end_turn"},
            {"command": "Rhema: New Session"},
            {"command": "Rhema: Open Session…"},
            {"input": "First question", "title": "Rhema: Open Session"},
            {"waitLog": "Rhema", "contains": "▶ Session: First question"},
        ]
    )
    text = steps[-1]["text"]
    assert f"▶ Session: First question\nyou: First question\nrhema: {ANSWER}\n" in text


def test_edit_turn_changes_an_unsaved_editor_and_undo_reverts_it(vscode: VSCode) -> None:
    hello = vscode.workspace / "hello.py"
    user_line = "# unsaved user line"
    edited = f'{EDIT_LINE}print("hello")\n{user_line}\n'
    steps = vscode.drive(
        [
            {"openFile": "hello.py"},
            {"press": "Control+End"},
            {"typeText": f"{user_line}\n"},
            {"command": "Rhema: Ask"},
            {"input": "edit hello.py", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "■ end_turn"},
            {"command": "File: Save"},
            {"waitFile": str(hello), "equals": edited},
            {"clickEditor": True},
            {"press": "Control+Z"},
            {"command": "File: Save"},
            {"waitFile": str(hello), "equals": f'print("hello")\n{user_line}\n'},
        ]
    )
    assert "🔧 edit_file hello.py ✓\nAdded a header line.\n■ end_turn" in steps[5]["text"]
    assert steps[7]["text"] == edited
    assert steps[-1]["text"] == f'print("hello")\n{user_line}\n'
