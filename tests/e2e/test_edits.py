"""Edits through the editor: a version race never overwrites the user's
typing, a turn can be undone, a selection can be rewritten in place, and
review mode annotates edits."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

# Edits are applied in the negotiated position encoding, against versions:
# each recorded editor's capabilities give another path.
pytestmark = pytest.mark.per_editor


async def test_a_buffer_changed_under_an_edit_keeps_the_users_text(
    client: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    path = workspace / "hello.py"
    client.open(path)
    typed = 'def greet(name):\n    return "hello, " + name  # the user typed this\n'
    client.state.type_before_apply = (path, typed)
    fake.script(
        tool_reply(("edit_file", {"path": "hello.py", "old_text": "hello ", "new_text": "bye "})),
        text_reply("ok"),
    )

    result = await client.command("rhema.turn", {"prompt": "say bye"})

    assert result["stopReason"] == "end_turn"
    assert client.buffer(path).text == typed
    outcome = client.events_of("tool_result")[0]
    assert outcome["isError"] is True
    assert "re-read" in outcome["content"].lower()
    # the model was told, in-band
    assert "re-read" in fake.requests[1]["messages"][-1]["content"].lower()


async def test_undo_turn_reverts_the_agents_edits_and_spares_the_users(
    client: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    hello = workspace / "hello.py"
    other = workspace / "other.py"
    other.write_text("x = 1\n")
    client.open(hello)
    client.open(other)
    fake.script(
        tool_reply(
            ("edit_file", {"path": "hello.py", "old_text": "hello ", "new_text": "hi "}),
            ("edit_file", {"path": "other.py", "old_text": "x = 1", "new_text": "x = 2"}),
            ("write_file", {"path": "new.py", "content": "print('new')\n"}),
        ),
        text_reply("done"),
    )
    result = await client.command("rhema.turn", {"prompt": "change things"})
    assert '"hi "' in client.buffer(hello).text
    assert client.buffer(other).text == "x = 2\n"
    client.type_text(other, "x = 2  # mine now\n")

    undone = await client.command("rhema.undoTurn", {"session": result["session"]})

    assert sorted(undone["reverted"]) == sorted([hello.as_uri(), (workspace / "new.py").as_uri()])
    assert undone["conflicts"] == [other.as_uri()]
    assert client.buffer(hello).text == 'def greet(name):\n    return "hello " + name\n'
    assert client.buffer(other).text == "x = 2  # mine now\n"
    assert not (workspace / "new.py").exists()


async def test_rhema_edit_rewrites_the_selection_in_place(
    client: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    path = workspace / "hello.py"
    text = "naïve = 'café 🍵'\nkeep = 1\n"
    client.open(path, text)
    fake.script(text_reply("```python\nnaive = 'coffee 🍵'\n```"))
    first_line = "naïve = 'café 🍵'"
    units = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[client.encoding]
    width = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[client.encoding]
    end_character = len(first_line.encode(units)) // width
    assert end_character != len(first_line)  # the encodings really differ here

    result = await client.command(
        "rhema.edit",
        {
            "uri": path.as_uri(),
            "range": {
                "start": {"line": 0, "character": 0},
                "end": {"line": 0, "character": end_character},
            },
            "instruction": "ASCII names, English words",
        },
    )

    assert result["applied"] is True
    assert client.buffer(path).text == "naive = 'coffee 🍵'\nkeep = 1\n"
    sent = fake.requests[0]["messages"][-1]["content"]
    assert "«selection»naïve = 'café 🍵'«/selection»" in sent
    edit = client.state.edits[0].edit
    changes = edit.document_changes or []
    assert isinstance(changes[0], types.TextDocumentEdit)
    assert changes[0].text_document.version == 1
    assert all(e.range.start.line == 0 and e.range.end.line == 0 for e in changes[0].edits)


async def test_review_mode_edits_are_preselected_in_the_editors_preview(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    client = await start_editor(
        "visual_studio_code",
        [workspace],
        settings_for(fake, review=True),
        env={"XDG_STATE_HOME": str(tmp_path / "state")},
    )
    try:
        client.open(workspace / "hello.py")
        fake.script(
            tool_reply(("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "hey"})),
            text_reply("ok"),
        )
        await client.command("rhema.turn", {"prompt": "hey"})
        edit = client.state.edits[0].edit
        assert edit.change_annotations
        by_confirmation = {
            annotation.needs_confirmation: annotation
            for annotation in edit.change_annotations.values()
        }
        # The change itself is ticked; a no-op needing confirmation opens the preview.
        assert "edit_file" in by_confirmation[False].label
        assert "review" in by_confirmation[True].label.lower()
        assert '"hey "' in client.buffer(workspace / "hello.py").text
        assert client.events_of("tool_result")[0]["content"].startswith("edited hello.py")
    finally:
        await client.shutdown_session()
