"""Inline completion in real VS Code (code-server): ghost text appears as one types in a
Python file, from the server's ``textDocument/inlineCompletion`` on the scripted model's
fill-in-the-middle answer, and Tab inserts it."""

from __future__ import annotations

import pytest

from tests.editors.vscode.conftest import VSCode
from tests.fakes.model_server import FakeModelServer, text_reply

pytestmark = pytest.mark.timeout(900)

SERVER_RUNNING = {"waitStatus": "Rhema", "not": ["starting", "stopped"]}


def test_ghost_text_appears_as_one_types_and_tab_inserts_it(
    vscode: VSCode, model: FakeModelServer
) -> None:
    model.responder = lambda body: text_reply("return a + b")
    hello = vscode.workspace / "hello.py"
    vscode.drive(
        [
            SERVER_RUNNING,
            {"openFile": "hello.py"},
            {"press": "Control+End"},
            {"typeText": "def add(a, b):\n"},
            {"waitFor": ".ghost-text-decoration", "hasText": "return"},  # spaces are &nbsp;
            {"press": "Tab"},
            {"command": "File: Save"},
            {"waitFile": str(hello), "contains": "def add(a, b):\n    return a + b"},
        ]
    )
    prompts = [post.body["prompt"] for post in model.posts if post.path == "/v1/completions"]
    # The model was asked at the empty body, with the unsaved buffer before the cursor.
    assert any(prompt.endswith('print("hello")\ndef add(a, b):\n    ') for prompt in prompts)
