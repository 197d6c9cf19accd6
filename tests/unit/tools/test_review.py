"""Review mode: the preview's choices as the model hears them. The editor
here keeps VS Code's rule (an edit whose annotation needs confirmation starts
unticked; Apply applies the ticked ones) and lets the test untick hunks, as
a user would; the rule itself is checked in real VS Code (tests/editors)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lsprotocol.types import (
    AnnotatedTextEdit,
    TextDocumentEdit,
    WorkspaceEdit,
)

from rhema_lsp.tools import EditOutcome, MemoryEditor
from rhema_lsp.tools.review import hunks_of, landed

from .conftest import Bench


class PreviewEditor(MemoryEditor):
    """Applies what VS Code's refactor preview would: edits ticked by
    default, minus the hunks the user unticked (by index, in order)."""

    def __init__(self, roots: list[Path], untick: set[int]) -> None:
        super().__init__(roots, supports_change_annotations=True)
        self.untick = untick

    async def apply_edit(
        self, edit: WorkspaceEdit, label: str, expected: Mapping[str, str | None]
    ) -> EditOutcome:
        notes = edit.change_annotations or {}
        kept: list[object] = []
        index = 0
        for change in edit.document_changes or []:
            annotation = getattr(change, "annotation_id", None)
            if annotation is not None and notes[annotation].needs_confirmation:
                continue  # starts unticked, and the user leaves it so
            if isinstance(change, TextDocumentEdit):
                edits = []
                for item in change.edits:
                    assert isinstance(item, AnnotatedTextEdit)
                    if notes[item.annotation_id].needs_confirmation:
                        continue
                    if index not in self.untick:
                        edits.append(item)
                    index += 1
                change = TextDocumentEdit(text_document=change.text_document, edits=edits)
            kept.append(change)
        chosen = WorkspaceEdit(document_changes=kept)  # type: ignore[arg-type]
        return await super().apply_edit(chosen, label, {})


TEXT = "a = 1\nb = 2\nc = 3\nd = 4\n"
NEW = "a = 10\nb = 2\nc = 30\nd = 40\n"


async def test_every_change_applies_when_the_user_keeps_the_preselection(bench: Bench) -> None:
    (bench.root / "v.py").write_text(TEXT)
    bench.editor = PreviewEditor([bench.root], untick=set())
    bench.make("edit", review=True)
    result = await bench.call("write_file", path="v.py", content=NEW)
    assert not result.is_error
    assert result.content.startswith("wrote v.py")
    assert (bench.root / "v.py").read_text() == NEW


async def test_unticked_changes_are_reported_as_the_users_choice(bench: Bench) -> None:
    (bench.root / "v.py").write_text(TEXT)
    bench.editor = PreviewEditor([bench.root], untick={1})
    bench.make("edit", review=True)
    result = await bench.call("write_file", path="v.py", content=NEW)
    assert not result.is_error
    assert (bench.root / "v.py").read_text() == "a = 10\nb = 2\nc = 3\nd = 4\n"
    assert "applied 1 of 2 changes to v.py and declined 1" in result.content
    assert "their choice, not an error" in result.content
    assert "change 2 at lines 3-4: c = 3 | d = 4 -> c = 30 | d = 40" in result.content


async def test_declining_everything_is_not_an_error(bench: Bench) -> None:
    (bench.root / "v.py").write_text(TEXT)
    bench.editor = PreviewEditor([bench.root], untick={0, 1})
    bench.make("edit", review=True)
    result = await bench.call("write_file", path="v.py", content=NEW)
    assert not result.is_error
    assert "applied 0 of 2" in result.content
    assert (bench.root / "v.py").read_text() == TEXT


def test_landed_tells_each_hunk_apart_even_when_texts_repeat() -> None:
    old = "x\nx\nx\n"
    hunks = [(0, 1, "y"), (4, 5, "y")]
    assert landed(old, hunks, "y\nx\ny\n") == [True, True]
    assert landed(old, hunks, "x\nx\ny\n") == [False, True]
    assert landed(old, hunks, "y\nx\nx\n") == [True, False]
    assert landed(old, hunks, "z\nx\nx\n") is None


def test_hunks_are_offsets_in_document_order() -> None:
    from rhema_lsp.tools import minimal_edits

    edits = list(minimal_edits(TEXT, NEW, "utf-16"))
    hunks = hunks_of(TEXT, edits, "utf-16")
    assert [start for start, _end, _new in hunks] == sorted(start for start, _e, _n in hunks)
    assert landed(TEXT, hunks, NEW) == [True] * len(hunks)
