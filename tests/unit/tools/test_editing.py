"""The edit tools against an in-memory editor: buffers win, minimal versioned
edits in both encodings, races, rejections, resource operations, review mode."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol.types import (
    AnnotatedTextEdit,
    CreateFile,
    DeleteFile,
    RenameFile,
    TextDocumentEdit,
    TextEdit,
)

from rhema_lsp.tools import EditJournal, MemoryEditor, OpenDocument, apply_workspace_edit_to_text
from rhema_lsp.tools.review import REVIEW_ANNOTATION

from .conftest import Bench

ENCODINGS = ["utf-8", "utf-16"]


def _editor(bench: Bench, encoding: str, **kwargs: object) -> MemoryEditor:
    bench.editor = MemoryEditor([bench.root], position_encoding=encoding, **kwargs)  # type: ignore[arg-type]
    bench.make("edit")
    return bench.editor


def _only_text_edit(editor: MemoryEditor) -> tuple[TextDocumentEdit, list[TextEdit]]:
    changes = editor.received[-1].edit.document_changes
    assert changes is not None and len(changes) == 1
    change = changes[0]
    assert isinstance(change, TextDocumentEdit)
    edits = [e for e in change.edits if isinstance(e, TextEdit)]
    return change, edits


async def test_read_file_prefers_the_unsaved_buffer(bench: Bench) -> None:
    bench.editor.open(bench.uri("src/app.py"), "def main():\n    return 'unsaved'\n", 4)
    result = await bench.call("read_file", path="src/app.py")
    assert not result.is_error
    assert "'unsaved'" in result.content
    assert "     2\t    return 'unsaved'" in result.content


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(
    ("text", "old", "new"),
    [
        ("a\r\nprint('x')\r\nb\r\n", "print('x')", "print('y')"),
        ("\tif x:\n\t\treturn 1\n", "\t\treturn 1", "\t\treturn 2"),
        ("s = '😀😀'\nt = 1\n", "t = 1", "t = 2"),
        ("x = '漢字😀'  # ok\n", "# ok", "# 很好"),
        ("e = '😀'; f = 1\n", "f = 1", "f = 😀"),
    ],
)
async def test_edit_file_sends_minimal_versioned_edit(
    bench: Bench, encoding: str, text: str, old: str, new: str
) -> None:
    editor = _editor(bench, encoding)
    uri = bench.uri("src/app.py")
    editor.open(uri, text, 7)
    result = await bench.call("edit_file", path="src/app.py", old_text=old, new_text=new)
    assert not result.is_error, result.content
    change, edits = _only_text_edit(editor)
    assert change.text_document.version == 7
    expected = text.replace(old, new)
    assert apply_workspace_edit_to_text(text, edits, encoding) == expected
    assert editor.open_document(uri) is not None
    assert editor.open_document(uri).text == expected  # type: ignore[union-attr]
    assert sum(len(e.new_text) for e in edits) <= len(new)
    # disk untouched: the edit went to the buffer
    assert (bench.root / "src/app.py").read_text() == "def main():\n    return 1\n"


async def test_edit_file_matches_crlf_files_with_lf_old_text(bench: Bench) -> None:
    (bench.root / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await bench.call("edit_file", path="win.txt", old_text="one\ntwo", new_text="1\n2")
    assert not result.is_error, result.content
    assert (bench.root / "win.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_file_zero_and_several_matches(bench: Bench) -> None:
    (bench.root / "dup.txt").write_text("x = 1\ny = 2\nx = 1\n")
    missing = await bench.call("edit_file", path="dup.txt", old_text="z = 3", new_text="q")
    assert missing.is_error and "0 matches" in missing.content
    several = await bench.call("edit_file", path="dup.txt", old_text="x = 1", new_text="x = 9")
    assert several.is_error
    assert "2 times" in several.content and "lines 1, 3" in several.content
    assert (bench.root / "dup.txt").read_text() == "x = 1\ny = 2\nx = 1\n"
    everywhere = await bench.call(
        "edit_file", path="dup.txt", old_text="x = 1", new_text="x = 9", replace_all=True
    )
    assert not everywhere.is_error
    assert (bench.root / "dup.txt").read_text() == "x = 9\ny = 2\nx = 9\n"


async def test_version_race_is_an_in_band_error_and_keeps_user_text(bench: Bench) -> None:
    uri = bench.uri("src/app.py")
    bench.editor.open(uri, "value = 1\n", 3)

    def user_types() -> None:
        bench.editor.type_text(uri, "value = 1  # typing...\n")

    bench.editor.before_apply = user_types
    result = await bench.call("edit_file", path="src/app.py", old_text="1", new_text="2")
    assert result.is_error
    assert "re-read" in result.content.lower()
    document = bench.editor.open_document(uri)
    assert document is not None and document.text == "value = 1  # typing...\n"


async def test_neovim_applied_but_skipped_is_caught(bench: Bench) -> None:
    uri = bench.uri("src/app.py")
    bench.editor.open(uri, "value = 1\n", 3)
    bench.editor.skip_stale = True
    bench.editor.before_apply = lambda: bench.editor.type_text(uri, "value = 1 # mine\n")
    result = await bench.call("edit_file", path="src/app.py", old_text="value = 1", new_text="v=2")
    assert result.is_error
    assert "did not land" in result.content and "re-read" in result.content.lower()
    document = bench.editor.open_document(uri)
    assert document is not None and document.text == "value = 1 # mine\n"


class _TypesAfterFirstLook(MemoryEditor):
    """The user types right after the tool has read the document."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.looks = 0

    def open_document(self, uri: str) -> OpenDocument | None:
        self.looks += 1
        if self.looks == 2:
            self.type_text(uri, "b\n")
        return super().open_document(uri)


async def test_document_changed_before_send_is_not_sent(bench: Bench) -> None:
    bench.editor = _TypesAfterFirstLook([bench.root])
    bench.make("edit")
    uri = bench.uri("src/app.py")
    bench.editor.open(uri, "a\n", 1)
    result = await bench.call("edit_file", path="src/app.py", old_text="a", new_text="c")
    assert result.is_error and "changed since it was read" in result.content
    assert bench.editor.received == []
    document = bench.editor.open_document(uri)
    assert document is not None and document.text == "b\n"


async def test_rejected_edit_is_in_band(bench: Bench) -> None:
    bench.editor.reject = "user rejected"
    result = await bench.call("edit_file", path="src/app.py", old_text="1", new_text="2")
    assert result.is_error
    assert "user rejected" in result.content and "Re-read" in result.content
    assert (bench.root / "src/app.py").read_text() == "def main():\n    return 1\n"


async def test_changes_used_without_document_changes_support(bench: Bench) -> None:
    editor = _editor(bench, "utf-16", supports_document_changes=False)
    result = await bench.call("edit_file", path="src/app.py", old_text="1", new_text="2")
    assert not result.is_error
    sent = editor.received[-1].edit
    assert sent.document_changes is None
    assert sent.changes is not None and list(sent.changes) == [bench.uri("src/app.py")]


async def test_write_file_creates_then_replaces_minimally(bench: Bench) -> None:
    created = await bench.call("write_file", path="pkg/new.py", content="a = 1\nb = 2\n")
    assert not created.is_error, created.content
    changes = bench.editor.received[-1].edit.document_changes
    assert changes is not None and isinstance(changes[0], CreateFile)
    assert (bench.root / "pkg/new.py").read_text() == "a = 1\nb = 2\n"
    replaced = await bench.call("write_file", path="pkg/new.py", content="a = 1\nb = 3\n")
    assert not replaced.is_error
    _change, edits = _only_text_edit(bench.editor)
    assert [e.new_text for e in edits] == ["3"]
    assert (bench.root / "pkg/new.py").read_text() == "a = 1\nb = 3\n"


async def test_rename_and_delete_are_resource_operations(bench: Bench) -> None:
    renamed = await bench.call("rename_path", **{"from": "README.md", "to": "docs/README.md"})
    assert not renamed.is_error, renamed.content
    changes = bench.editor.received[-1].edit.document_changes
    assert changes is not None and isinstance(changes[0], RenameFile)
    assert (bench.root / "docs/README.md").read_text() == "# Project\n"
    assert not (bench.root / "README.md").exists()
    deleted = await bench.call("delete_path", path="docs/README.md")
    assert not deleted.is_error
    changes = bench.editor.received[-1].edit.document_changes
    assert changes is not None and isinstance(changes[0], DeleteFile)
    assert not (bench.root / "docs/README.md").exists()


async def test_delete_directory_needs_confirmation(bench: Bench) -> None:
    refused = await bench.call("delete_path", path="src")
    assert refused.is_error and "did not allow" in refused.content
    assert (bench.root / "src/app.py").exists()
    bench.editor.answer = "Allow"
    allowed = await bench.call("delete_path", path="src")
    assert not allowed.is_error
    assert not (bench.root / "src").exists()


async def test_review_mode_annotates_edits(bench: Bench) -> None:
    bench.editor = MemoryEditor([bench.root], supports_change_annotations=True)
    bench.make("edit", review=True)
    result = await bench.call(
        "edit_file", run_id="run-9", path="src/app.py", old_text="1", new_text="2"
    )
    assert not result.is_error
    sent = bench.editor.received[-1]
    assert sent.label == "rhema: edit_file src/app.py"
    assert sent.edit.change_annotations is not None
    annotations = dict(sent.edit.change_annotations)
    review = annotations.pop(REVIEW_ANNOTATION)
    ((annotation_id, annotation),) = annotations.items()
    assert "run-9" in annotation_id and "call-edit_file" in annotation_id
    # The change is pre-selected; only the no-op opening the preview needs confirmation.
    assert annotation.needs_confirmation is False
    assert review.needs_confirmation is True
    assert "src/app.py" in annotation.label
    trigger, change = sent.edit.document_changes  # type: ignore[misc]
    # The no-op opening the preview: "create" the existing folder, if absent.
    assert isinstance(trigger, CreateFile)
    assert trigger.uri == bench.root.as_uri()
    assert trigger.options is not None and trigger.options.ignore_if_exists is True
    assert trigger.options.overwrite is None
    assert trigger.annotation_id == REVIEW_ANNOTATION
    assert isinstance(change, TextDocumentEdit)
    assert all(isinstance(e, AnnotatedTextEdit) for e in change.edits)
    assert {e.annotation_id for e in change.edits} == {annotation_id}  # type: ignore[union-attr]


async def test_journal_records_every_applied_change(bench: Bench) -> None:
    journal = EditJournal()
    bench.make("edit", journal=journal)
    await bench.call("edit_file", run_id="t1", path="src/app.py", old_text="1", new_text="2")
    await bench.call("write_file", run_id="t1", path="n.txt", content="n\n")
    await bench.call("rename_path", run_id="t2", **{"from": "n.txt", "to": "m.txt"})
    await bench.call("delete_path", run_id="t2", path="m.txt")
    first = journal.entries_for("t1")
    assert [(e.kind, e.before, e.after) for e in first] == [
        ("edit", "def main():\n    return 1\n", "def main():\n    return 2\n"),
        ("create", None, "n\n"),
    ]
    second = journal.entries_for("t2")
    assert [e.kind for e in second] == ["rename_from", "rename_to", "delete"]
    assert second[-1].before == "n\n"


async def test_edit_of_a_missing_file_points_to_write_file(bench: Bench) -> None:
    result = await bench.call("edit_file", path="nope.txt", old_text="a", new_text="b")
    assert result.is_error and "write_file" in result.content


async def test_unsaved_buffer_without_a_file_can_be_edited(bench: Bench) -> None:
    uri = bench.uri("draft.py")
    bench.editor.open(uri, "x = 1\n", 1)
    result = await bench.call("edit_file", path="draft.py", old_text="1", new_text="2")
    assert not result.is_error, result.content
    document = bench.editor.open_document(uri)
    assert document is not None and document.text == "x = 2\n"
    assert not (bench.root / "draft.py").exists()
