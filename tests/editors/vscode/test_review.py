"""Review mode in real VS Code (code-server 4.100.3): the agent's edits open the
refactor preview with every change ticked; Apply applies them; unticking one applies
the rest, and the model hears which change the user declined, as their choice.
Screenshots of the preview go to the test artifacts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.editors.vscode.conftest import VSCode
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

pytestmark = pytest.mark.timeout(900)

OLD = "a = 1\nb = 2\nc = 3\nd = 4\n"
NEW = "a = 10\nb = 2\nc = 30\nd = 40\n"
CHECKBOXES = ".monaco-list-row[aria-level='2'] input.edit-checkbox"
APPLY = {"click": ".monaco-button", "hasText": "Apply"}


def tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("extra_settings", [{"rhema.review": True}])
def test_review_preselects_every_change_and_reports_the_declined_ones(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    for name in ("v.py", "w.py"):
        (vscode.workspace / name).write_text(OLD)
    model.script(
        tool_reply(("write_file", {"path": "v.py", "content": NEW})),
        text_reply("v.py done"),
        tool_reply(("write_file", {"path": "w.py", "content": NEW})),
        text_reply("w.py done"),
    )
    ticked = artifacts / "review-every-change-ticked.png"
    unticked = artifacts / "review-one-change-unticked.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Ask"},
            {"input": "Change v.py", "title": "Rhema: Ask"},
            {"waitFor": CHECKBOXES},
            {"query": CHECKBOXES},
            {"screenshot": str(ticked)},
            APPLY,
            {"waitLog": "Rhema", "contains": "v.py done"},
            {"waitFile": str(vscode.workspace / "v.py"), "equals": NEW},
            {"command": "Rhema: Ask"},
            {"input": "Change w.py", "title": "Rhema: Ask"},
            {"waitFor": CHECKBOXES},
            {"click": ".monaco-list-row[aria-level='2']:has-text('c = 3') input.edit-checkbox"},
            {"query": CHECKBOXES},
            {"screenshot": str(unticked)},
            APPLY,
            {"waitLog": "Rhema", "contains": "w.py done"},
            {"waitFile": str(vscode.workspace / "w.py"), "contains": "a = 10"},
        ],
        timeout_s=120,
    )
    # Every change of the first edit was shown ticked, and Apply applied them all.
    first = steps[3]["elements"]
    assert len(first) == 2 and all(box["checked"] for box in first), first
    # (VS Code saves files a refactoring changed that were not open: files.refactoring.autoSave)
    assert steps[7]["text"] == NEW
    assert tool_results(model.requests[1]) == ["wrote v.py (4 lines)"]
    # The user unticked the second change of the next edit; the rest applied.
    second = steps[12]["elements"]
    assert [box["checked"] for box in second] == [True, False], second
    assert steps[-1]["text"] == "a = 10\nb = 2\nc = 3\nd = 4\n"
    result = tool_results(model.requests[3])[-1]
    assert "the user applied 1 of 2 changes to w.py and declined 1" in result
    assert "their choice, not an error" in result
    assert "change 2 at lines 3-4: c = 3 | d = 4 -> c = 30 | d = 40" in result
    assert ticked.stat().st_size > 0 and unticked.stat().st_size > 0
