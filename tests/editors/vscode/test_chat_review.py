"""Reviewing a turn's changes in the chat, in real VS Code (code-server), against the real
server: the changed-files card grows while the turn runs, with +/− counts; each edit card
shows its diff; Reject all takes every file back (saved as it was), Undo puts the agent's
text back; Accept all keeps them; a reopened session (a new window) still has the card,
with the decisions the store and the workspace remember. Screenshots go to
``test-artifacts/vscode/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.editors.vscode.conftest import VSCode, release
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

pytestmark = pytest.mark.timeout(900)

CHAT = {"in": "chat"}
ORIGINAL = {"a.py": "a = 1\nb = 2\n", "b.py": "x = 1\n"}
EDITED = {"a.py": "a = 10\nb = 2\nc = 3\n", "b.py": "# header\nx = 1\n"}
SUMMARY = " ".join(f"Changed{i}" for i in range(60))
AUTOSAVE = pytest.mark.parametrize(
    "extra_settings", [{}, {"files.autoSave": "off"}], ids=["code-server-default", "autosave-off"]
)


def chat(step: dict[str, Any]) -> dict[str, Any]:
    return {**step, **CHAT}


def script_two_edits(vscode: VSCode, model: FakeModelServer, *, held: bool = False) -> None:
    """Two edits, then a summary; ``held``: the summary waits for :func:`release` (the turn
    runs until the test has seen what it wants of it)."""
    for name, text in ORIGINAL.items():
        (vscode.workspace / name).write_text(text)
    edits = [
        ("edit_file", {"path": name, "old_text": ORIGINAL[name], "new_text": EDITED[name]})
        for name in ORIGINAL
    ]
    model.script(
        tool_reply(edits[0]),
        tool_reply(edits[1]),
        text_reply(SUMMARY, chunk=8, hold=0 if held else None),
    )


def send(prompt: str) -> list[dict[str, Any]]:
    return [chat({"click": "#input"}), {"typeText": prompt}, {"press": "Enter"}]


def save_all(vscode: VSCode) -> list[dict[str, Any]]:
    """The user saves what the agent wrote: VS Code opens the files an edit dirtied in
    editors 800 ms later (with auto-save they may be saved already), and "Save All Files"
    saves open editors."""
    return [
        {"sleepMs": 1500},
        {"command": "File: Save All Files"},
        *[{"waitFile": str(vscode.workspace / n), "equals": t} for n, t in EDITED.items()],
    ]


@AUTOSAVE
def test_the_card_grows_live_reject_all_is_undoable_and_the_card_survives_a_reopen(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    # The summary holds: the card is there, with both files, before the turn ends.
    script_two_edits(vscode, model, held=True)
    name = "autosave-off" if extra_settings else "default"
    live_shot = artifacts / f"review-live-card-{name}.png"
    rejected_shot = artifacts / f"review-rejected-{name}.png"
    reopened_shot = artifacts / f"review-reopened-{name}.png"
    ws = vscode.workspace
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            *send("Change a.py and b.py"),
            chat({"waitFor": ".changes li.file", "hasText": "b.py"}),
            chat({"query": ".changes .title"}),
            chat({"query": ".changes li.file"}),
            chat({"query": ".end"}),
            {"screenshot": str(live_shot)},
            release(model),
            chat({"waitFor": ".end"}),
            chat({"waitFor": ".changes .reject-all"}),
            chat({"query": ".changes .title"}),
            # Each edit card carries its diff.
            chat({"click": ".tool summary", "hasText": "a.py"}),
            chat({"query": '.tool:has-text("a.py") pre.diff span'}),
            *save_all(vscode),
            chat({"click": ".changes .reject-all"}),
            chat({"waitFor": ".changes .decision.rejected"}),
            *[{"waitFile": str(ws / n), "equals": t} for n, t in ORIGINAL.items()],
            chat({"query": ".changes li.file"}),
            {"screenshot": str(rejected_shot)},
            # Undo the reject of a.py: the agent's text is back, saved as the reject left it.
            chat({"click": ".changes li.file[data-uri$='a.py'] .undo"}),
            chat({"waitFor": ".changes li.file[data-uri$='a.py'] .reject"}),
            {"waitFile": str(ws / "a.py"), "equals": EDITED["a.py"]},
            # (the window's state is written to disk a moment later, as VS Code does)
            {"sleepMs": 2000},
        ],
        timeout_s=150,
    )
    queries = [step["elements"] for step in steps if "query" in step]
    (live_title,), live_files, ended, (final_title,), diff, rejected = queries
    assert live_title["text"] == "Changed files · turn 1 (so far)"
    assert [f["data"]["uri"].rsplit("/", 1)[-1] for f in live_files] == ["a.py", "b.py"]
    assert ended == []  # the card was there before the turn ended
    assert "+2−1" in live_files[0]["text"] and "+1−0" in live_files[1]["text"]
    assert final_title["text"] == "Changed files · turn 1"
    assert [line["text"] for line in diff] == ["- a = 1\n", "+ a = 10\n", "  b = 2\n", "+ c = 3\n"]
    assert all("rejected" in f["text"] and "Undo" in f["text"] for f in rejected), rejected
    assert (ws / "b.py").read_text() == ORIGINAL["b.py"]
    assert len(model.requests) == 3  # reviewing asks nothing of the model
    # A new window reopens the session: the card is back, with what was decided.
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"waitFor": ".changes li.file", "hasText": "b.py"}),
            chat({"query": ".changes li.file"}),
            chat({"query": "#transcript > *"}),
            {"screenshot": str(reopened_shot)},
        ]
    )
    files, items = [step["elements"] for step in steps if "query" in step]
    by_name = {f["data"]["uri"].rsplit("/", 1)[-1]: f["text"] for f in files}
    assert "rejected" in by_name["b.py"]
    assert "rejected" not in by_name["a.py"] and "Reject" in by_name["a.py"]  # re-applied
    kinds = [item["data"].get("kind") for item in items]
    assert kinds.index("changes") > kinds.index("user")
    assert all(shot.stat().st_size > 0 for shot in (live_shot, rejected_shot, reopened_shot))


# The files are saved before Accept all in either setting, and accepting writes nothing:
# code-server's default auto save only.
def test_accept_all_keeps_every_file(
    vscode: VSCode, model: FakeModelServer, artifacts: Path
) -> None:
    script_two_edits(vscode, model)
    shot = artifacts / "review-accepted.png"
    ws = vscode.workspace
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            *send("Change a.py and b.py"),
            chat({"waitFor": ".end"}),
            *save_all(vscode),
            chat({"click": ".changes .accept-all"}),
            chat({"waitFor": ".changes li.file[data-uri$='b.py'] .decision.accepted"}),
            chat({"query": ".changes li.file"}),
            chat({"query": ".changes .accept-all, .changes .reject-all"}),
            {"screenshot": str(shot)},
        ],
        timeout_s=150,
    )
    files, buttons = [step["elements"] for step in steps if "query" in step]
    assert all("accepted" in f["text"] for f in files) and len(files) == 2
    assert buttons == []  # nothing left to decide
    for name_, text in EDITED.items():
        assert (ws / name_).read_text() == text
    assert shot.stat().st_size > 0
