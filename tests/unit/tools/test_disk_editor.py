"""DiskEditor: atomic writes on disk, resource operations, stale-disk refusal,
the in-memory overlay, confirmation through its callback."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsprotocol.types import (
    CreateFile,
    DeleteFile,
    DeleteFileOptions,
    OptionalVersionedTextDocumentIdentifier,
    Position,
    Range,
    RenameFile,
    TextDocumentEdit,
    TextEdit,
    WorkspaceEdit,
)

from rhema_lsp.tools import DiskEditor, Editor, MemoryEditor


def _replace_first_char(uri: str, text: str, version: int | None = None) -> WorkspaceEdit:
    start = Position(line=0, character=0)
    edit = TextEdit(range=Range(start=start, end=Position(line=0, character=1)), new_text=text)
    identifier = OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return WorkspaceEdit(
        document_changes=[TextDocumentEdit(text_document=identifier, edits=[edit])]
    )


def _names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


async def test_text_edit_is_written_atomically_keeping_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "a.sh"
    target.write_text("x = 1\n")
    target.chmod(0o755)
    inode = target.stat().st_ino
    editor = DiskEditor([tmp_path])
    outcome = await editor.apply_edit(
        _replace_first_char(target.as_uri(), "y"), "label", {target.as_uri(): "y = 1\n"}
    )
    assert outcome.applied, outcome.reason
    assert target.read_text() == "y = 1\n"
    assert target.stat().st_mode & 0o777 == 0o755
    assert target.stat().st_ino != inode  # replaced by rename, not rewritten in place
    assert _names(tmp_path) == ["a.sh"]  # no temp file left


async def test_file_changed_on_disk_since_read_is_not_written(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("abc\n")
    editor = DiskEditor([tmp_path])
    outcome = await editor.apply_edit(
        _replace_first_char(target.as_uri(), "X"), "label", {target.as_uri(): "Xbc-old\n"}
    )
    assert not outcome.applied and "changed since it was read" in (outcome.reason or "")
    assert target.read_text() == "abc\n"


async def test_create_rename_delete(tmp_path: Path) -> None:
    editor = DiskEditor([tmp_path])
    new = tmp_path / "d" / "e" / "new.txt"
    moved = tmp_path / "moved.txt"
    edit = WorkspaceEdit(
        document_changes=[
            CreateFile(uri=new.as_uri()),
            RenameFile(old_uri=new.as_uri(), new_uri=moved.as_uri()),
        ]
    )
    outcome = await editor.apply_edit(edit, "l", {moved.as_uri(): "", new.as_uri(): None})
    assert outcome.applied, outcome.reason
    assert moved.read_text() == "" and not new.exists()
    gone = await editor.apply_edit(
        WorkspaceEdit(
            document_changes=[
                DeleteFile(uri=(tmp_path / "d").as_uri(), options=DeleteFileOptions(recursive=True))
            ]
        ),
        "l",
        {},
    )
    assert gone.applied and not (tmp_path / "d").exists()


async def test_create_over_existing_file_fails_without_change(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("keep\n")
    editor = DiskEditor([tmp_path])
    outcome = await editor.apply_edit(
        WorkspaceEdit(document_changes=[CreateFile(uri=(tmp_path / "x.txt").as_uri())]), "l", {}
    )
    assert not outcome.applied and "already exists" in (outcome.reason or "")
    assert (tmp_path / "x.txt").read_text() == "keep\n"


async def test_edits_outside_the_roots_are_refused(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    outside = tmp_path / "other.txt"
    outside.write_text("abc\n")
    editor = DiskEditor([tmp_path / "root"])
    outcome = await editor.apply_edit(_replace_first_char(outside.as_uri(), "X"), "l", {})
    assert not outcome.applied and "outside" in (outcome.reason or "")
    assert outside.read_text() == "abc\n"


async def test_overlay_documents_are_edited_in_memory_with_versions(tmp_path: Path) -> None:
    target = tmp_path / "open.txt"
    target.write_text("disk\n")
    editor = DiskEditor([tmp_path], overlay={target.as_uri(): "buffer\n"})
    stale = await editor.apply_edit(_replace_first_char(target.as_uri(), "B", version=5), "l", {})
    assert not stale.applied and "version" in (stale.reason or "")
    outcome = await editor.apply_edit(_replace_first_char(target.as_uri(), "B", version=1), "l", {})
    assert outcome.applied
    document = editor.open_document(target.as_uri())
    assert document is not None and document.text == "Buffer\n" and document.version == 2
    assert target.read_text() == "disk\n"


async def test_confirm_goes_through_the_callback(tmp_path: Path) -> None:
    asked: list[str] = []

    async def answer(message: str, choices: Sequence[str]) -> str | None:
        asked.append(message)
        return choices[0]

    assert await DiskEditor([tmp_path], answer).confirm("ok?", ["Yes", "No"]) == "Yes"
    assert asked == ["ok?"]
    assert await DiskEditor([tmp_path]).confirm("ok?", ["Yes"]) is None


def test_both_editors_satisfy_the_editor_protocol(tmp_path: Path) -> None:
    editors: list[Editor] = [DiskEditor([tmp_path]), MemoryEditor([tmp_path])]
    assert [e.position_encoding for e in editors] == ["utf-16", "utf-16"]
