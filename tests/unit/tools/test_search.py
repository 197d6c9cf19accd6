"""grep, find_files and list_dir over real ripgrep."""

from __future__ import annotations

import pytest

from rhema_lsp.tools.search import GREP_CAP, glob_matcher

from .conftest import Bench

pytestmark = pytest.mark.process  # starts child processes


def _populate(bench: Bench) -> None:
    root = bench.root
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("needle in build\n")
    (root / "debug.log").write_text("needle in log\n")
    (root / "src" / "util.py").write_text("# Needle here\nneedle = 1\n")
    (root / "src" / "deep" / "er").mkdir(parents=True)
    (root / "src" / "deep" / "er" / "x.ts").write_text("const needle = 2;\n")
    (root / ".env").write_text("needle=secret\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("needle in git\n")


async def test_grep_respects_gitignore_and_skips_internals(bench: Bench) -> None:
    _populate(bench)
    result = await bench.call("grep", pattern="needle")
    assert not result.is_error, result.content
    assert "src/util.py:2: needle = 1" in result.content
    assert "src/deep/er/x.ts:1: const needle = 2;" in result.content
    for hidden in ("build/", "debug.log", ".git", ".env"):
        assert hidden not in result.content


async def test_grep_case_glob_and_path(bench: Bench) -> None:
    _populate(bench)
    insensitive = await bench.call("grep", pattern="NEEDLE", ignore_case=True, path="src")
    assert "src/util.py:1: # Needle here" in insensitive.content
    globbed = await bench.call("grep", pattern="needle", glob="*.ts")
    assert globbed.content == "src/deep/er/x.ts:1: const needle = 2;"
    none = await bench.call("grep", pattern="absent-pattern")
    assert not none.is_error and none.content.startswith("no matches")


async def test_grep_buffer_text_wins_over_disk(bench: Bench) -> None:
    _populate(bench)
    bench.editor.open(bench.uri("src/util.py"), "nothing to see\nunsaved needle\n", 2)
    bench.editor.open(bench.uri("src/unsaved.py"), "needle only in memory\n", 1)
    result = await bench.call("grep", pattern="needle", path="src")
    assert "src/util.py:2: unsaved needle" in result.content
    assert "needle = 1" not in result.content
    assert "src/unsaved.py:1: needle only in memory" in result.content


async def test_grep_caps_results_with_a_note(bench: Bench) -> None:
    (bench.root / "many.txt").write_text("hit\n" * (GREP_CAP + 50))
    result = await bench.call("grep", pattern="hit")
    assert result.content.count("many.txt:") == GREP_CAP
    assert "narrow your search" in result.content


async def test_grep_bad_regex_is_in_band(bench: Bench) -> None:
    result = await bench.call("grep", pattern="(unclosed")
    assert result.is_error and "regex" in result.content.lower()


async def test_find_files_by_glob(bench: Bench) -> None:
    _populate(bench)
    result = await bench.call("find_files", pattern="*.py")
    assert result.content.splitlines() == ["src/app.py", "src/util.py"]
    nested = await bench.call("find_files", pattern="src/**/*.ts")
    assert nested.content == "src/deep/er/x.ts"


async def test_list_dir_depth_and_ignores(bench: Bench) -> None:
    _populate(bench)
    result = await bench.call("list_dir", depth=2)
    lines = result.content.splitlines()
    assert "src/" in lines and "src/app.py" in lines and "README.md" in lines
    assert any(line.startswith("src/deep/") and "files below" in line for line in lines)
    assert not any(line.startswith(("build", ".git/", "debug.log")) for line in lines)
    shallow = await bench.call("list_dir", path="src", depth=1)
    assert "src/ (depth 1" in shallow.content.splitlines()[0]


async def test_list_dir_of_a_file_is_in_band(bench: Bench) -> None:
    result = await bench.call("list_dir", path="README.md")
    assert result.is_error and "not a directory" in result.content


def test_glob_matcher_semantics() -> None:
    assert glob_matcher("*.py")("a/b/c.py")
    assert not glob_matcher("*.py")("a/b/c.pyc")
    assert glob_matcher("src/**/*.ts")("src/a/b.ts")
    assert glob_matcher("src/**/*.ts")("src/b.ts")
    assert glob_matcher("*.{js,ts}")("x.ts")
    assert glob_matcher("!*.md")("x.py")
