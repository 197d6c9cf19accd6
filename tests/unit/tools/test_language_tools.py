"""The language tools over an in-memory LanguageService: the column found
from the symbol's spelling, short relative results, the cap, the plain "no
language server" answer, rename through the edit path (journaled, one
WorkspaceEdit), and the diagnostics an edit introduced or removed."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.engine import ReplaySafety
from rhema_lsp.tools import (
    DiagnosticsAnswer,
    EditJournal,
    LanguageAnswer,
    LanguageFailed,
    MemoryEditor,
    WorkspaceTools,
)
from rhema_lsp.tools.language_text import MAX_ITEMS
from rhema_lsp.tools.positions import uri_to_path

from .conftest import Bench

CORE = 'def greet(name: str) -> str:\n    return "Hello, " + name\n'
USE = 'from pkg.core import greet\n\nprint(greet("Ann"))\n'


def _range(line: int, start: int, end: int) -> dict[str, Any]:
    return {
        "start": {"line": line, "character": start},
        "end": {"line": line, "character": end},
    }


class FakeLanguage:
    """A language server in memory: it finds ``greet`` by text, answers
    renames of it, and reports a type error wherever ``greet(42)`` is
    written in the text the editor holds now."""

    def __init__(self, editor: MemoryEditor, root: Path) -> None:
        self.editor = editor
        self.root = root
        self.requests: list[tuple[str, Mapping[str, Any]]] = []
        self.fail: str | None = None
        self.complete = True
        self.extra: list[dict[str, Any]] = []

    def _text(self, uri: str) -> str:
        document = self.editor.open_document(uri)
        return document.text if document is not None else uri_to_path(uri).read_text()

    def _greets(self) -> list[tuple[str, int, int]]:
        found = []
        for path in sorted(self.root.rglob("*.py")):
            for number, line in enumerate(self._text(path.as_uri()).splitlines()):
                for match in re.finditer(r"\bgreet\b", line):
                    found.append((path.as_uri(), number, match.start()))
        return found

    async def request(
        self, method: str, params: Mapping[str, Any], *, uri: str
    ) -> LanguageAnswer | None:
        self.requests.append((method, params))
        if self.fail is not None:
            raise LanguageFailed(self.fail)
        if not uri.endswith(".py") and method != "workspace/symbol":
            return None
        greets = self._greets()
        if method == "textDocument/definition":
            core = (self.root / "pkg/core.py").as_uri()
            return LanguageAnswer([{"uri": core, "range": _range(0, 4, 9)}], "fakels")
        if method == "textDocument/references":
            return LanguageAnswer(
                [{"uri": u, "range": _range(n, c, c + 5)} for u, n, c in greets] + self.extra,
                "fakels",
            )
        if method == "textDocument/documentSymbol":
            return LanguageAnswer(
                [
                    {
                        "name": "greet",
                        "kind": 12,
                        "range": _range(0, 0, 30),
                        "selectionRange": _range(0, 4, 9),
                        "children": [
                            {"name": "name", "kind": 13, "range": _range(0, 10, 14)},
                        ],
                    }
                ],
                "fakels",
            )
        if method == "workspace/symbol":
            core = (self.root / "pkg/core.py").as_uri()
            return LanguageAnswer(
                [
                    {
                        "name": "greet",
                        "kind": 12,
                        "location": {"uri": core, "range": _range(0, 4, 9)},
                    }
                ],
                "fakels",
            )
        if method == "textDocument/rename":
            changes: dict[str, list[dict[str, Any]]] = {}
            for u, n, c in greets:
                changes.setdefault(u, []).append(
                    {"range": _range(n, c, c + 5), "newText": params["newName"]}
                )
            return LanguageAnswer({"changes": changes}, "fakels")
        raise AssertionError(method)

    async def diagnostics(
        self, uri: str, version: int | None, *, wait: float
    ) -> DiagnosticsAnswer | None:
        if not uri.endswith(".py"):
            return None
        if self.fail is not None:
            raise LanguageFailed(self.fail)
        found = []
        for number, line in enumerate(self._text(uri).splitlines()):
            if "greet(42)" in line:
                found.append(
                    {
                        "range": _range(number, 12, 14),
                        "severity": 1,
                        "message": 'Argument of type "Literal[42]" cannot be assigned to '
                        'parameter "name" of type "str"',
                        "source": "basedpyright",
                    }
                )
            if "unused" in line:
                found.append({"range": _range(number, 0, 1), "severity": 4, "message": "hint"})
        return DiagnosticsAnswer(found, "fakels", self.complete)


@pytest.fixture
def lang(bench: Bench) -> FakeLanguage:
    (bench.root / "pkg").mkdir()
    (bench.root / "pkg" / "core.py").write_text(CORE)
    (bench.root / "pkg" / "use.py").write_text(USE)
    fake = FakeLanguage(bench.editor, bench.root)
    bench.tools = WorkspaceTools(
        [bench.root], bench.root, "agent", bench.editor, language=fake, journal=EditJournal()
    )
    return fake


def test_the_language_tools_are_offered_and_only_rename_is_unsafe(bench: Bench) -> None:
    ask = [s.name for s in bench.make("ask").specs()]
    assert ask[-4:] == ["diagnostics", "symbols", "definition", "references"]
    edit = [s.name for s in bench.make("edit").specs()]
    assert "rename_symbol" in edit
    for name in ("diagnostics", "symbols", "definition", "references"):
        assert bench.tools.replay_safety(name) is ReplaySafety.SAFE
    assert bench.tools.replay_safety("rename_symbol") is ReplaySafety.UNSAFE


async def test_references_find_the_column_and_answer_with_relative_lines(
    bench: Bench, lang: FakeLanguage
) -> None:
    result = await bench.call("references", path="pkg/core.py", line=1, symbol="greet")
    assert not result.is_error, result.content
    assert lang.requests[0][1]["position"] == {"line": 0, "character": 4}
    assert result.content == (
        "3 references of 'greet' (fakels):\n"
        "pkg/core.py:1: def greet(name: str) -> str:\n"
        "pkg/use.py:1: from pkg.core import greet\n"
        'pkg/use.py:3: print(greet("Ann"))'
    )


async def test_the_column_counts_in_the_editor_encoding(bench: Bench, lang: FakeLanguage) -> None:
    (bench.root / "pkg" / "wide.py").write_text('s = "😀"; greet(s)\n')
    await bench.call("definition", path="pkg/wide.py", line=1, symbol="greet")
    assert lang.requests[-1][1]["position"] == {"line": 0, "character": 10}  # utf-16: 😀 is 2


async def test_a_symbol_not_on_the_line_names_what_the_line_says(
    bench: Bench, lang: FakeLanguage
) -> None:
    result = await bench.call("definition", path="pkg/use.py", line=2, symbol="greet")
    assert result.is_error and "is not on this line" in result.content
    beyond = await bench.call("definition", path="pkg/use.py", line=9, symbol="greet")
    assert beyond.is_error and "has 3 lines" in beyond.content
    partial = await bench.call("definition", path="pkg/use.py", line=3, symbol="gree")
    assert partial.is_error  # a whole word, not a piece of one
    assert lang.requests == []


async def test_definition_and_symbols(bench: Bench, lang: FakeLanguage) -> None:
    found = await bench.call("definition", path="pkg/use.py", line=3, symbol="greet")
    assert (
        found.content
        == "1 definition of 'greet' (fakels):\npkg/core.py:1: def greet(name: str) -> str:"
    )
    outline = await bench.call("symbols", query="", path="pkg/core.py")
    assert outline.content == "pkg/core.py (fakels):\n1: function greet\n1:   variable name"
    matching = await bench.call("symbols", query="gre")
    assert matching.content == "symbols matching 'gre' (fakels):\npkg/core.py:1: function greet"


async def test_locations_outside_the_workspace_are_shown_without_path_or_text(
    bench: Bench, lang: FakeLanguage
) -> None:
    lang.extra = [{"uri": (bench.outside / "secret.txt").as_uri(), "range": _range(0, 0, 1)}]
    result = await bench.call("references", path="pkg/core.py", line=1, symbol="greet")
    assert result.content.endswith("\n<outside the workspace>")
    assert str(bench.outside) not in result.content
    assert "SENTINEL" not in result.content


async def test_results_are_capped_with_a_note(bench: Bench, lang: FakeLanguage) -> None:
    lines = "".join(f"greet({i})\n" for i in range(MAX_ITEMS + 7))
    (bench.root / "pkg" / "many.py").write_text(lines)
    result = await bench.call("references", path="pkg/core.py", line=1, symbol="greet")
    assert result.content.endswith("[10 more references not shown; narrow with grep]")
    assert len(result.content.splitlines()) == MAX_ITEMS + 2


async def test_without_a_server_the_tools_say_how_to_get_one(bench: Bench) -> None:
    (bench.root / "pkg").mkdir()
    (bench.root / "pkg" / "core.py").write_text(CORE)
    bench.make("agent")
    for name, args in (
        ("definition", {"path": "pkg/core.py", "line": 1, "symbol": "greet"}),
        ("symbols", {"query": "", "path": "pkg/core.py"}),
        ("diagnostics", {"path": "pkg/core.py"}),
        ("rename_symbol", {"path": "pkg/core.py", "line": 1, "symbol": "greet", "new_name": "x"}),
    ):
        result = await bench.call(name, **args)
        assert result.is_error, name
        assert "no language server is available for core.py" in result.content
        assert "pip install basedpyright" in result.content
    edited = await bench.call("edit_file", path="pkg/core.py", old_text="Hello", new_text="Hi")
    assert edited.content == "edited pkg/core.py: 1 replacement"


async def test_no_server_for_the_language_and_a_failing_server(
    bench: Bench, lang: FakeLanguage
) -> None:
    result = await bench.call("symbols", query="", path="README.md")
    assert result.is_error and "no language server is available for README.md" in result.content
    lang.fail = "basedpyright exited (code 1)"
    failed = await bench.call("references", path="pkg/core.py", line=1, symbol="greet")
    assert failed.is_error and failed.content == "basedpyright exited (code 1)"
    edited = await bench.call("edit_file", path="pkg/core.py", old_text="Hello", new_text="Hi")
    assert not edited.is_error
    assert edited.content.startswith("edited pkg/core.py: 1 replacement\n")
    assert "diagnostics unavailable: basedpyright exited (code 1)" in edited.content


async def test_the_tools_refuse_paths_outside_the_workspace(
    bench: Bench, lang: FakeLanguage
) -> None:
    for path in ("../outside/secret.txt", str(bench.outside / "secret.txt"), ".git/config"):
        result = await bench.call("definition", path=path, line=1, symbol="SENTINEL")
        assert result.is_error
    assert lang.requests == []


async def test_rename_applies_one_workspace_edit_through_the_journal(
    bench: Bench, lang: FakeLanguage
) -> None:
    result = await bench.call(
        "rename_symbol", path="pkg/core.py", line=1, symbol="greet", new_name="welcome"
    )
    assert result.content == (
        "renamed 'greet' to 'welcome' (fakels): 3 edits in 2 files: pkg/core.py, pkg/use.py"
    )
    assert (bench.root / "pkg/use.py").read_text() == USE.replace("greet", "welcome")
    assert (bench.root / "pkg/core.py").read_text() == CORE.replace("greet", "welcome")
    assert len(bench.editor.received) == 1
    assert bench.editor.received[0].label == "rhema: rename_symbol pkg/core.py (+1 file)"
    journal = bench.tools.journal
    assert isinstance(journal, EditJournal)
    assert sorted(Path(e.uri).name for e in journal.entries_for("turn-1")) == ["core.py", "use.py"]
    assert {e.before for e in journal.entries_for("turn-1")} == {CORE, USE}


async def test_rename_refuses_a_malformed_or_file_moving_edit(
    bench: Bench, lang: FakeLanguage
) -> None:
    async def moving(method: str, params: Mapping[str, Any], *, uri: str) -> LanguageAnswer:
        return LanguageAnswer({"documentChanges": [{"kind": "rename", "oldUri": uri}]}, "fakels")

    lang.request = moving  # type: ignore[method-assign]
    result = await bench.call(
        "rename_symbol", path="pkg/core.py", line=1, symbol="greet", new_name="x"
    )
    assert result.is_error and "nothing was changed" in result.content
    assert bench.editor.received == []
    assert (bench.root / "pkg/core.py").read_text() == CORE


async def test_rename_into_a_file_outside_is_refused_whole(
    bench: Bench, lang: FakeLanguage
) -> None:
    outside = (bench.outside / "secret.txt").as_uri()

    async def escaping(method: str, params: Mapping[str, Any], *, uri: str) -> LanguageAnswer:
        edit = {"range": _range(0, 0, 1), "newText": "x"}
        return LanguageAnswer({"changes": {uri: [edit], outside: [edit]}}, "fakels")

    lang.request = escaping  # type: ignore[method-assign]
    result = await bench.call(
        "rename_symbol", path="pkg/core.py", line=1, symbol="greet", new_name="x"
    )
    assert result.is_error and "<outside the workspace>" in result.content
    assert str(bench.outside) not in result.content
    assert bench.editor.received == []
    assert (bench.outside / "secret.txt").read_text().startswith("SENTINEL")


async def test_an_edit_reports_the_error_it_introduced_and_its_fix(
    bench: Bench, lang: FakeLanguage
) -> None:
    broken = await bench.call("edit_file", path="pkg/use.py", old_text='"Ann"', new_text="42")
    assert broken.content == (
        "edited pkg/use.py: 1 replacement\n"
        '1 new error: pkg/use.py:3: Argument of type "Literal[42]" cannot be assigned to '
        'parameter "name" of type "str" (basedpyright)'
    )
    listed = await bench.call("diagnostics", path="pkg/use.py")
    assert listed.content.startswith("1 problem:\npkg/use.py:3: error: Argument of type")
    fixed = await bench.call("edit_file", path="pkg/use.py", old_text="42", new_text='"Bo"')
    assert fixed.content == (
        "edited pkg/use.py: 1 replacement\n"
        '1 error gone: pkg/use.py:3: Argument of type "Literal[42]" cannot be assigned to '
        'parameter "name" of type "str" (basedpyright)'
    )
    quiet = await bench.call("edit_file", path="pkg/use.py", old_text='"Bo"', new_text='"Cy"')
    assert quiet.content == "edited pkg/use.py: 1 replacement"


async def test_an_edit_in_an_open_buffer_is_diagnosed_on_the_buffer(
    bench: Bench, lang: FakeLanguage
) -> None:
    uri = bench.uri("pkg/use.py")
    bench.editor.open(uri, USE.replace('"Ann"', "42"))  # unsaved: already broken
    moved = await bench.call("edit_file", path="pkg/use.py", old_text="print(", new_text="(")
    assert moved.content == "edited pkg/use.py: 1 replacement"  # still broken: no news
    created = await bench.call("write_file", path="pkg/new.py", content="greet(42)\n")
    assert created.content.startswith("created pkg/new.py (1 lines)\n1 new error: pkg/new.py:1:")


async def test_a_late_server_is_said_not_passed_off_as_clean(
    bench: Bench, lang: FakeLanguage
) -> None:
    lang.complete = False
    result = await bench.call("edit_file", path="pkg/use.py", old_text='"Ann"', new_text="42")
    assert result.content == (
        "edited pkg/use.py: 1 replacement\nfakels did not report diagnostics for the edited "
        "pkg/use.py within 1.5 s; call diagnostics to check"
    )


async def test_diagnostics_without_a_path_cover_open_and_asked_files(
    bench: Bench, lang: FakeLanguage
) -> None:
    nothing = await bench.call("diagnostics")
    assert nothing.content.startswith("no files are open")
    bench.editor.open(bench.uri("pkg/use.py"), "greet(42)\nunused\n")
    listed = await bench.call("diagnostics")
    assert listed.content.splitlines()[0] == "1 problem:"  # the hint is left out
    assert listed.content.splitlines()[1].startswith("pkg/use.py:1: error:")
