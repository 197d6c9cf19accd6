"""The confinement gate: what a context attachment may read, and how.

Every escape a client could name as ``context`` is refused before any byte
of the target is read; protected files are asked for; a FIFO or a device
never blocks; a document only the editor has is its buffer.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from rhema_lsp.contract import ContextRef
from rhema_lsp.runs.context import CONTEXT_MAX_BYTES, ContextRefused, read_context
from rhema_lsp.tools import MemoryEditor, PathRefused, ToolError, Workspace
from rhema_lsp.tools.gate import Gate, unsafe_root_reason

SECRET = "SENTINEL-SECRET-51c9"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace and, beside it, a file holding a secret."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "main.py").write_text("print('hi')\n")
    outside = tmp_path / "secret.txt"
    outside.write_text(SECRET)
    return ws, outside


def gate_for(ws: Path, editor: MemoryEditor | None = None) -> Gate:
    return Gate(Workspace([ws], ws), editor or MemoryEditor([ws]))


async def test_a_workspace_file_is_read_and_an_open_buffer_wins(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    editor = MemoryEditor([ws])
    gate = gate_for(ws, editor)
    assert await gate.read_document((ws / "main.py").as_uri()) == "print('hi')\n"
    editor.open((ws / "main.py").as_uri(), "unsaved text")
    assert await gate.read_document((ws / "main.py").as_uri()) == "unsaved text"


@pytest.mark.parametrize(
    "escape",
    ["sibling", "dotdot", "environ", "symlink", "hardlink", "git", "store", "dev-zero", "remote"],
)
async def test_every_escape_is_refused(layout: tuple[Path, Path], escape: str) -> None:
    ws, outside = layout
    if escape == "sibling":
        uri = outside.as_uri()
    elif escape == "dotdot":
        uri = f"{ws.as_uri()}/../{outside.name}"
    elif escape == "environ":
        uri = "file:///proc/self/environ"
    elif escape == "symlink":
        (ws / "notes.txt").symlink_to(outside)
        uri = (ws / "notes.txt").as_uri()
    elif escape == "hardlink":
        os.link(outside, ws / "notes.txt")
        uri = (ws / "notes.txt").as_uri()
    elif escape == "git":
        (ws / ".git").mkdir()
        (ws / ".git" / "config").write_text(SECRET)
        uri = (ws / ".git" / "config").as_uri()
    elif escape == "store":
        (ws / ".rhema").mkdir()
        (ws / ".rhema" / "sessions.sqlite3").write_text(SECRET)
        uri = (ws / ".rhema" / "sessions.sqlite3").as_uri()
    elif escape == "dev-zero":
        uri = "file:///dev/zero"
    else:
        uri = f"file://elsewhere{outside}"
    editor = MemoryEditor([ws])
    with pytest.raises(PathRefused) as refused:
        await gate_for(ws, editor).read_document(uri)
    assert SECRET not in str(refused.value)
    assert editor.asked == []  # refused outright, nobody was asked to allow it


async def test_a_hard_linked_file_is_still_readable_by_the_tools(layout: tuple[Path, Path]) -> None:
    """pnpm hard-links every dependency: the tools read such files, an
    attachment does not (it has no reason to)."""
    ws, outside = layout
    os.link(outside, ws / "linked.txt")
    gate = gate_for(ws)
    snap = await gate.read(str(ws / "linked.txt"))
    assert snap.text == SECRET


@pytest.mark.parametrize("kind", ["fifo", "directory"])
async def test_what_is_not_a_regular_file_is_refused_without_blocking(
    layout: tuple[Path, Path], kind: str
) -> None:
    ws, _ = layout
    special = ws / "special"
    if kind == "fifo":
        os.mkfifo(special)
    else:
        special.mkdir()
    # The guard only stops a hang from stalling the suite: a refusal is immediate.
    with anyio.fail_after(30), pytest.raises(ToolError) as refused:
        await gate_for(ws).read_document(special.as_uri())
    assert "not a regular file" in str(refused.value) or "directory" in str(refused.value)


@pytest.mark.parametrize(("answer", "allowed"), [(None, False), ("Deny", False), ("Allow", True)])
async def test_a_protected_attachment_is_sent_only_when_the_user_allows_it(
    layout: tuple[Path, Path], answer: str | None, allowed: bool
) -> None:
    ws, _ = layout
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    editor = MemoryEditor([ws], answer=answer)
    gate = gate_for(ws, editor)
    if allowed:
        assert SECRET in await gate.read_document((ws / ".env").as_uri())
    else:
        with pytest.raises(PathRefused, match="did not allow"):
            await gate.read_document((ws / ".env").as_uri())
    ((question, choices),) = editor.asked
    assert ".env" in question
    assert "attached as context" in question
    assert choices == ("Deny", "Allow")


async def test_an_attachment_over_the_cap_is_refused(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    big = ws / "big.txt"
    big.write_text("x" * (CONTEXT_MAX_BYTES + 1))
    gate = gate_for(ws)
    with pytest.raises(ToolError, match="too large"):
        await gate.read_document(big.as_uri(), limit=CONTEXT_MAX_BYTES)
    editor = MemoryEditor([ws])
    editor.open(big.as_uri(), "y" * (CONTEXT_MAX_BYTES + 1))
    with pytest.raises(ToolError, match="too large"):
        await gate_for(ws, editor).read_document(big.as_uri(), limit=CONTEXT_MAX_BYTES)


async def test_an_untitled_buffer_is_its_text_and_nothing_else(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    editor = MemoryEditor([ws])
    editor.open("untitled:Untitled-1", "scratch text")
    gate = gate_for(ws, editor)
    assert await gate.read_document("untitled:Untitled-1") == "scratch text"
    with pytest.raises(PathRefused, match="not a file:// URI"):
        await gate.read_document("untitled:Untitled-2")
    with pytest.raises(PathRefused):
        await gate.read_document("https://example.invalid/secret")


async def test_read_context_names_the_refused_attachment(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    editor = MemoryEditor([ws])
    refs = [ContextRef(uri=(ws / "main.py").as_uri()), ContextRef(uri=outside.as_uri())]
    with pytest.raises(ContextRefused) as refused:
        await read_context(refs, [ws], ws, editor, lambda p: p.name)
    assert outside.as_uri() in str(refused.value)
    assert "outside the workspace" in str(refused.value)
    pieces = await read_context(refs[:1], [ws], ws, editor, lambda p: p.name)
    assert [(p.path, p.text) for p in pieces] == [("main.py", "print('hi')\n")]


def test_the_root_and_the_home_directory_confine_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert unsafe_root_reason(Path("/")) is not None
    assert "home directory" in (unsafe_root_reason(tmp_path) or "")
    (tmp_path / "project").mkdir()
    assert unsafe_root_reason(tmp_path / "project") is None
