"""WorkspaceTools as the engine sees it: modes, replay safety, argument
checks, read_file paging, binary and non-UTF-8 files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rhema_lsp.engine import ReplaySafety, ToolCall, ToolContext
from rhema_lsp.tools import TOOLS_BY_MODE, MemoryEditor, WorkspaceTools
from rhema_lsp.tools.reading import PAGE_LINES
from rhema_lsp.vocabulary import Mode

from .conftest import Bench


def test_specs_per_mode(bench: Bench) -> None:
    modes: tuple[Mode, ...] = ("ask", "plan", "edit", "agent")
    names = {mode: [s.name for s in bench.make(mode).specs()] for mode in modes}
    assert names["ask"] == [
        "read_file",
        "list_dir",
        "find_files",
        "grep",
        "diagnostics",
        "symbols",
        "definition",
        "references",
    ]
    assert names["plan"] == names["ask"]
    assert names["edit"] == names["ask"] + [
        "edit_file",
        "write_file",
        "rename_path",
        "delete_path",
        "rename_symbol",
    ]
    assert names["agent"] == names["edit"] + ["run_command"]
    assert TOOLS_BY_MODE["agent"] == tuple(names["agent"])


def test_replay_safety(bench: Bench) -> None:
    for name in ("read_file", "list_dir", "find_files", "grep"):
        assert bench.tools.replay_safety(name) is ReplaySafety.SAFE
    for name in ("edit_file", "write_file", "rename_path", "delete_path", "run_command", "x"):
        assert bench.tools.replay_safety(name) is ReplaySafety.UNSAFE


async def test_tools_outside_the_mode_are_in_band_errors(bench: Bench) -> None:
    bench.make("ask")
    result = await bench.call("write_file", path="x.txt", content="x")
    assert result.is_error and "not available in ask mode" in result.content
    assert not (bench.root / "x.txt").exists()
    unknown = await bench.call("format_disk")
    assert unknown.is_error and "unknown tool" in unknown.content


async def test_bad_arguments_are_in_band_errors(bench: Bench) -> None:
    missing = await bench.call("read_file")
    assert missing.is_error
    assert missing.content == "read_file: missing required argument 'path'"
    wrong = await bench.call("read_file", path=3)
    assert wrong.is_error and "must be a string" in wrong.content
    flag = await bench.call("grep", pattern="x", ignore_case="yes")
    assert flag.is_error and "true or false" in flag.content
    deep = await bench.call("list_dir", depth=9)
    assert deep.is_error and deep.content == "list_dir: argument 'depth' must be at most 6"
    empty = await bench.call("run_command", command=" ")
    assert empty.is_error and "'command' is empty" in empty.content
    assert bench.editor.asked == []  # refused before anyone is asked
    ctx = ToolContext(cwd=bench.root)
    listed = await bench.tools.resolve(ToolCall(id="c", name="read_file", args=[1]), ctx)
    assert listed.is_error and "JSON object" in listed.content


async def test_read_file_pages_with_a_note(bench: Bench) -> None:
    (bench.root / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    first = await bench.call("read_file", path="long.txt")
    assert first.content.splitlines()[0] == "     1\tline 1"
    assert f"offset={PAGE_LINES + 1}" in first.content or "offset=" in first.content
    assert len(first.content.encode()) <= 24_000
    page = await bench.call("read_file", path="long.txt", offset=4999, limit=5)
    assert page.content == "  4999\tline 4999\n  5000\tline 5000"
    past = await bench.call("read_file", path="long.txt", offset=9000)
    assert past.is_error and "past the end" in past.content


async def test_read_file_crlf_lines_match_the_editor(bench: Bench) -> None:
    (bench.root / "w.txt").write_bytes(b"a\r\nb\rc\n")
    result = await bench.call("read_file", path="w.txt")
    assert result.content == "     1\ta\n     2\tb\n     3\tc"


async def test_binary_and_non_utf8_files_are_refused(bench: Bench) -> None:
    (bench.root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00" + bytes(100))
    (bench.root / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    image = await bench.call("read_file", path="img.png")
    assert image.is_error and "binary file (111 bytes, PNG image)" in image.content
    latin = await bench.call("read_file", path="latin.txt")
    assert latin.is_error and "not valid UTF-8" in latin.content and "offset 3" in latin.content


async def test_read_of_a_directory_points_to_list_dir(bench: Bench) -> None:
    result = await bench.call("read_file", path="src")
    assert result.is_error and "list_dir" in result.content


async def test_multi_root_absolute_paths(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (second / "x.txt").write_text("in b\n")
    tools = WorkspaceTools([first, second], first, "ask", MemoryEditor([first, second]))
    ctx = ToolContext(cwd=first)
    ok = await tools.resolve(
        ToolCall(id="c", name="read_file", args={"path": str(second / "x.txt")}), ctx
    )
    assert not ok.is_error and "in b" in ok.content
    relative = await tools.resolve(
        ToolCall(id="c", name="read_file", args={"path": "../b/x.txt"}), ctx
    )
    assert not relative.is_error


def test_unknown_mode_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        WorkspaceTools([tmp_path], tmp_path, "yolo", MemoryEditor([tmp_path]))  # type: ignore[arg-type]


def test_public_surface() -> None:
    import rhema_lsp.tools as tools

    assert set(tools.__all__) == {
        "LANGUAGE_METHODS",
        "READ_TOOLS",
        "TOOLS_BY_MODE",
        "DiagnosticsAnswer",
        "LanguageAnswer",
        "LanguageFailed",
        "LanguageService",
        "Launch",
        "Unlaunchable",
        "launch",
        "UPDATE_PLAN",
        "Planning",
        "latest_plan",
        "Access",
        "ConfirmCallback",
        "DiskEditor",
        "EditJournal",
        "Journal",
        "EditOutcome",
        "Editor",
        "JournalEntry",
        "LineIndex",
        "MemoryEditor",
        "OpenDocument",
        "PathRefused",
        "ReceivedEdit",
        "Target",
        "ToolError",
        "Workspace",
        "WorkspaceTools",
        "apply_text_edits",
        "apply_workspace_edit_to_text",
        "is_allowlisted",
        "minimal_edits",
        "path_to_uri",
        "ripgrep_binary",
        "scrubbed_environment",
        "uri_to_path",
    }


@pytest.mark.process
def test_tools_import_no_other_layer() -> None:
    code = (
        "import sys, rhema_lsp.tools\n"
        "bad = [m for m in sys.modules if m.split('.')[0] == 'pygls' or m.startswith("
        "('rhema_lsp.server', 'rhema_lsp.sessions', 'rhema_lsp.providers'))]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
