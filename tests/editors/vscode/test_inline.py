"""Inline completion and next-edit suggestions in real VS Code (code-server): ghost text
appears as one types in a Python file, from the server's ``textDocument/inlineCompletion``
on the scripted model's fill-in-the-middle answer, and Tab inserts it; then the next edit
the model proposes in Zeta's format is shown at its place (decorations) and Tab applies it;
the status-bar toggle turns suggestions off in the user's settings and back on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.editors.vscode.conftest import VSCode
from tests.fakes.model_server import FakeModelServer, Reply, text_reply

pytestmark = pytest.mark.timeout(900)

SERVER_RUNNING = {"waitStatus": "Rhema", "not": ["starting", "stopped"]}
NEXT = (
    "<|editable_region_start|>\n"
    "print(add(1, 2))\ndef add(a, b):\n    return a + b\n"
    "<|editable_region_end|>"
)


@pytest.fixture
def extra_settings() -> dict[str, Any]:
    """Completion as you type on (the other VS Code tests turn it off)."""
    return {"rhema.inlineCompletion": True}


def answer(body: Any) -> Reply:
    """FIM: the body of ``add`` at its empty body, nothing elsewhere; a chat request (the
    next edit): the rewritten region."""
    if "messages" in body:
        # A next edit once the body is in (asked earlier, as VS Code may while
        # the ghost text is still on its way, the model proposes nothing).
        asked = json.dumps(body["messages"])
        return text_reply(NEXT if "return a + b" in asked else "No edit comes to mind.")
    at_body = body["prompt"].endswith("def add(a, b):\n    ")
    return text_reply("return a + b" if at_body else "")


def test_ghost_text_then_a_next_edit_each_accepted_with_tab(
    vscode: VSCode, model: FakeModelServer
) -> None:
    model.responder = answer
    hello = vscode.workspace / "hello.py"
    vscode.drive(
        [
            SERVER_RUNNING,
            {"openFile": "hello.py"},
            {"press": "Control+End"},
            {"typeText": "def add(a, b):\n"},
            # VS Code asks as one types; a request it dropped while the server was still
            # loading is not asked again until the next key: ask once more as the user can.
            {"command": "Trigger Inline Suggestion"},
            {"waitFor": ".ghost-text-decoration", "hasText": "return"},  # spaces are &nbsp;
            {"press": "Tab"},
            {"command": "File: Save"},
            {"waitFile": str(hello), "contains": "def add(a, b):\n    return a + b"},
            # The next edit: the old text marked (a decoration's generated class) ...
            {"waitFor": ".view-lines [class*='ced-']"},
            {"press": "Tab"},
            {"command": "File: Save"},
            {"waitFile": str(hello), "contains": "print(add(1, 2))\ndef add(a, b):"},
            # The status-bar toggle: on, a click turns it off in the user's settings; back on.
            {"click": ".statusbar-item:has(.codicon-sparkle)", "hasText": "Suggestions"},
            {"waitFor": ".statusbar-item .codicon-circle-slash"},
            {"waitFile": str(vscode.settings_file), "contains": '"rhema.inlineCompletion": false'},
            {"click": ".statusbar-item:has(.codicon-circle-slash)", "hasText": "Suggestions"},
            {"waitFor": ".statusbar-item .codicon-sparkle"},
        ]
    )
    prompts = [post.body["prompt"] for post in model.posts if post.path == "/v1/completions"]
    # The model was asked at the empty body, with the unsaved buffer before the cursor.
    assert any(prompt.endswith('print("hello")\ndef add(a, b):\n    ') for prompt in prompts)
    chats = [post.body for post in model.posts if post.path == "/v1/chat/completions"]
    assert chats and "<|user_cursor_is_here|>" in str(chats[-1]["messages"])
