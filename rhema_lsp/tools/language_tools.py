"""The language tools: ``diagnostics``, ``symbols``, ``definition``,
``references``, and the asking half of ``rename_symbol``.

Each asks the :class:`~rhema_lsp.tools.language.LanguageService` the
workspace runs with, for a path that crossed the confinement gate like every
tool's (:class:`~rhema_lsp.tools.gate.Gate`: outside paths, ``.git`` and
``.rhema`` are refused; secret-looking files are asked for). The model names
a symbol by its 1-based line and its spelling on that line; the column is
found here, from the text the editor holds, in the editor's position
encoding (models are bad at columns). Answers are written by
:mod:`~rhema_lsp.tools.language_text`. Rules:

- No service, or a ``None`` answer: the result says plainly that no
  language server is available for that language, and how to get one.
- A :class:`~rhema_lsp.tools.language.LanguageFailed` becomes the tool's
  in-band error (it is a :class:`~rhema_lsp.tools.errors.ToolError`).
- Showing a location's line reads it through the gate; a location in a file
  needing confirmation to read is shown without its text.
- No path outside the workspace reaches the model: a location, problem or
  rename edit there is shown as :data:`OUTSIDE` (no path, no text).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

from lsprotocol.types import Position, Range, TextEdit

from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.gate import Gate, Snapshot
from rhema_lsp.tools.language import DiagnosticsAnswer, LanguageService
from rhema_lsp.tools.language_text import (
    Place,
    capped,
    document_symbols,
    locations,
    problems,
    workspace_symbols,
)
from rhema_lsp.tools.positions import LineIndex, apply_text_edits, unit_length, uri_to_path
from rhema_lsp.tools.rules import read_confirmation_reason
from rhema_lsp.tools.workspace import Access

__all__ = ["INSTALL_HINTS", "OUTSIDE", "LanguageTools", "no_server"]

OUTSIDE = "<outside the workspace>"
"""What the model reads for a location outside every workspace folder."""

INSTALL_HINTS: dict[str, str] = {
    ".py": "pip install basedpyright (or pyright, python-lsp-server, jedi-language-server)",
    ".pyi": "pip install basedpyright",
    ".ts": "npm install -g typescript typescript-language-server",
    ".tsx": "npm install -g typescript typescript-language-server",
    ".js": "npm install -g typescript typescript-language-server",
    ".jsx": "npm install -g typescript typescript-language-server",
    ".go": "go install golang.org/x/tools/gopls@latest",
    ".rs": "rustup component add rust-analyzer",
    ".c": "install clangd (apt install clangd)",
    ".h": "install clangd (apt install clangd)",
    ".cc": "install clangd (apt install clangd)",
    ".cpp": "install clangd (apt install clangd)",
    ".hpp": "install clangd (apt install clangd)",
}
"""How to get a language server, by file suffix."""

_IDENTIFIER = re.compile(r"\w+")


def no_server(path: Path) -> str:
    """The plain message for a document no language server serves."""
    hint = INSTALL_HINTS.get(path.suffix.lower())
    how = (
        f"install one and put it on PATH ({hint})"
        if hint
        else "install a language server for it and put it on PATH, or name one in the "
        "languageServers setting"
    )
    return (
        f"no language server is available for {path.name}; {how}. Meanwhile use grep and read_file."
    )


def symbol_column(line_text: str, symbol: str) -> int | None:
    """The code-point column of ``symbol`` in ``line_text``: its first
    occurrence as a whole word when it is a name, else its first occurrence."""
    if _IDENTIFIER.fullmatch(symbol):
        match = re.search(rf"(?<!\w){re.escape(symbol)}(?!\w)", line_text)
        return None if match is None else match.start()
    index = line_text.find(symbol)
    return None if index < 0 else index


class LanguageTools:
    """The language tools of one workspace (see the module docstring).

    Parameters
    ----------
    gate
        The confinement gate (and the editor, whose text and position
        encoding the questions use).
    language
        Who answers; ``None``: nobody (the tools say so).
    """

    def __init__(self, gate: Gate, language: LanguageService | None) -> None:
        self.gate = gate
        self.ws = gate.ws
        self.language = language
        self.asked: dict[str, None] = {}
        """URIs the tools asked about, oldest first (``diagnostics`` without
        a path covers them with the editor's open documents)."""

    # -- helpers -------------------------------------------------------------

    def _service(self, path: Path) -> LanguageService:
        if self.language is None:
            raise ToolError(no_server(path))
        return self.language

    async def _read(self, raw: str) -> Snapshot:
        snap = await self.gate.read(raw)
        if snap.text is None:
            raise ToolError(f"{snap.target.requested}: no such file")
        self.asked.setdefault(snap.target.uri)
        return snap

    async def position(self, raw: str, line: int, symbol: str) -> tuple[Snapshot, dict[str, Any]]:
        """The document ``raw`` and the LSP ``TextDocumentPositionParams`` of
        ``symbol`` on its 1-based ``line``.

        Raises
        ------
        ToolError
            Refused, unreadable, no such line, or the symbol is not on it.
        """
        snap = await self._read(raw)
        assert snap.text is not None
        shown = self.ws.display(snap.target.path)
        index = LineIndex(snap.text, self.gate.editor.position_encoding)
        count = len(index.starts) - (len(index.starts) > 1 and index.starts[-1] == len(snap.text))
        if line > count:
            raise ToolError(f"{shown} has {count} lines; there is no line {line}")
        start, end = index.starts[line - 1], index.content_ends[line - 1]
        text = snap.text[start:end]
        column = symbol_column(text, symbol)
        if column is None:
            raise ToolError(
                f"{shown}:{line}: {symbol!r} is not on this line, which reads: {text.strip()!r}. "
                "Give the line where the name is written (read_file shows line numbers)."
            )
        character = unit_length(text[:column], self.gate.editor.position_encoding)
        params = {
            "textDocument": {"uri": snap.target.uri},
            "position": {"line": line - 1, "character": character},
        }
        return snap, params

    async def _line_text(self, uri: str, line: int, cache: dict[str, str | None]) -> str | None:
        if uri not in cache:
            cache[uri] = await self._text_of(uri)
        text = cache[uri]
        if text is None:
            return None
        lines = text.splitlines()
        return lines[line].strip() if line < len(lines) else None

    async def _text_of(self, uri: str) -> str | None:
        try:
            target = await self.gate.resolve(uri, Access.READ)
            if read_confirmation_reason(target.parts) is not None:
                return None
            return (await self.gate.snapshot(target)).text
        except ToolError:
            return None

    def _shown(self, uri: str) -> str:
        """``uri`` as the model reads it: a workspace path, else :data:`OUTSIDE`."""
        try:
            path = Path(os.path.normpath(uri_to_path(uri)))
        except ValueError:  # not a file URI: nothing of it is shown
            return OUTSIDE
        if self.ws.fs.root_of(path) is None:
            return OUTSIDE
        return self.ws.display(path)

    async def _placed(self, places: list[tuple[str, Place]]) -> list[str]:
        """``path:line: text`` lines (``label`` after the line when given)."""
        cache: dict[str, str | None] = {}
        lines = []
        for label, place in places:
            where = f"{self._shown(place.uri)}:{place.line + 1}"
            if label:
                lines.append(f"{where}: {label}")
                continue
            if where.startswith(OUTSIDE):
                lines.append(OUTSIDE)
                continue
            text = await self._line_text(place.uri, place.line, cache)
            lines.append(f"{where}: {text}" if text else where)
        return lines

    # -- tools ---------------------------------------------------------------

    async def _navigate(
        self, method: str, raw: str, line: int, symbol: str, extra: Mapping[str, Any]
    ) -> str:
        snap, params = await self.position(raw, line, symbol)
        service = self._service(snap.target.path)
        answer = await service.request(method, {**params, **extra}, uri=snap.target.uri)
        if answer is None:
            raise ToolError(no_server(snap.target.path))
        found = locations(answer.result)
        shown = f"{self.ws.display(snap.target.path)}:{line}"
        what = "definition" if method == "textDocument/definition" else "reference"
        if not found:
            return f"{answer.source} found no {what} of {symbol!r} at {shown}"
        lines = await self._placed([("", place) for place in found])
        count = f"{len(found)} {what}{'s' if len(found) != 1 else ''}"
        head = f"{count} of {symbol!r} ({answer.source}):"
        return f"{head}\n{capped(lines, what + 's', 'narrow with grep')}"

    async def definition(self, raw: str, line: int, symbol: str) -> str:
        """Where ``symbol`` (on ``line`` of ``raw``) is defined."""
        return await self._navigate("textDocument/definition", raw, line, symbol, {})

    async def references(self, raw: str, line: int, symbol: str) -> str:
        """Every use of ``symbol`` (its declaration included)."""
        extra = {"context": {"includeDeclaration": True}}
        return await self._navigate("textDocument/references", raw, line, symbol, extra)

    async def symbols(self, query: str, raw: str | None) -> str:
        """The outline of ``raw`` (names containing ``query``), or the
        workspace's symbols matching ``query``."""
        if raw is not None:
            snap = await self._read(raw)
            service = self._service(snap.target.path)
            params = {"textDocument": {"uri": snap.target.uri}}
            answer = await service.request(
                "textDocument/documentSymbol", params, uri=snap.target.uri
            )
            if answer is None:
                raise ToolError(no_server(snap.target.path))
            shown = self.ws.display(snap.target.path)
            outline = document_symbols(answer.result, query)
            if not outline:
                matching = f" matching {query!r}" if query else ""
                return f"{answer.source} lists no symbols{matching} in {shown}"
            lines = [f"{line + 1}: {label}" for line, label in outline]
            return f"{shown} ({answer.source}):\n{capped(lines, 'symbols', 'give a query')}"
        if not query.strip():
            raise ToolError("symbols: give a query (part of a name), or a path for its outline")
        folder = self.ws.folder
        service = self._service(folder / "query")
        answer = await service.request("workspace/symbol", {"query": query}, uri=folder.as_uri())
        if answer is None:
            raise ToolError(no_server(folder / "query"))
        found = workspace_symbols(answer.result)
        if not found:
            return f"{answer.source} found no symbol matching {query!r}"
        lines = await self._placed(found)
        return f"symbols matching {query!r} ({answer.source}):\n" + capped(
            lines, "symbols", "give a longer query"
        )

    async def diagnostics(self, raw: str | None, wait: float) -> str:
        """The current problems of ``raw``, or of every open (or asked) file."""
        if raw is not None:
            snap = await self._read(raw)
            uris = [snap.target.uri]
        else:
            opened = [doc.uri for doc in self.gate.editor.open_documents()]
            uris = list(dict.fromkeys([*opened, *self.asked]))
            if not uris:
                return "no files are open or were asked about yet; give a path"
        lines: list[str] = []
        notes: list[str] = []
        for uri in uris:
            path = uri_to_path(uri)
            if self.language is None:
                notes.append(no_server(path))
                continue
            version = self._version(uri)
            answer = await self.language.diagnostics(uri, version, wait=wait)
            if answer is None:
                notes.append(no_server(path))
                continue
            lines += self._problem_lines(uri, answer)
            if not answer.complete:
                notes.append(
                    f"{answer.source} had not answered for {self._shown(uri)} in {wait:g} s"
                )
        if raw is not None and notes and not lines:
            raise ToolError(notes[0])
        head = f"{len(lines)} problem{'s' if len(lines) != 1 else ''}" if lines else "no problems"
        body = capped(lines, "problems", "ask for one path")
        tail = "".join(f"\n[{note}]" for note in dict.fromkeys(notes))
        return f"{head}{':' if lines else ''}\n{body}{tail}".rstrip() if lines else f"{head}{tail}"

    def _version(self, uri: str) -> int | None:
        document = self.gate.editor.open_document(uri)
        return None if document is None else document.version

    def _problem_lines(self, uri: str, answer: DiagnosticsAnswer) -> list[str]:
        shown = self._shown(uri)
        return [
            f"{shown}:{p.line + 1}: {p.severity}: {p.message} ({p.source})"
            for p in problems(answer.diagnostics, answer.source)
        ]

    async def rename_texts(
        self, raw: str, line: int, symbol: str, new_name: str
    ) -> tuple[str, list[tuple[Snapshot, str]], int]:
        """Ask for the rename of ``symbol`` to ``new_name``: who answered,
        each document's snapshot (resolved for writing) with the text the
        server's ``WorkspaceEdit`` gives it, and the number of text edits.

        Raises
        ------
        ToolError
            No server, a refused or missing document, an edit the tools
            cannot apply (file operations, overlapping edits, garbage).
        """
        snap, params = await self.position(raw, line, symbol)
        service = self._service(snap.target.path)
        answer = await service.request(
            "textDocument/rename", {**params, "newName": new_name}, uri=snap.target.uri
        )
        if answer is None:
            raise ToolError(no_server(snap.target.path))
        where = f"{self.ws.display(snap.target.path)}:{line}"
        edits = workspace_text_edits(answer.result)
        if edits is None:
            raise ToolError(
                f"{answer.source} answered the rename of {symbol!r} at {where} with an edit that "
                "also creates, renames or deletes files, or that is malformed; nothing was "
                "changed. Rename by hand with edit_file."
            )
        if not edits:
            raise ToolError(f"{answer.source} found nothing to rename for {symbol!r} at {where}")
        texts: list[tuple[Snapshot, str]] = []
        encoding = self.gate.editor.position_encoding
        for uri, text_edits in edits.items():
            if self._shown(uri) == OUTSIDE:
                raise ToolError(
                    f"{answer.source} answered the rename of {symbol!r} at {where} with an edit "
                    f"{OUTSIDE}; nothing was changed"
                )
            target = await self.gate.resolve(uri, Access.WRITE)
            document = await self.gate.snapshot(target)
            if document.text is None:
                raise ToolError(f"{self._shown(uri)}: no such file; nothing was changed")
            try:
                new_text = apply_text_edits(document.text, text_edits, encoding)
            except ValueError as exc:
                raise ToolError(
                    f"{answer.source}'s rename edit for {self._shown(uri)} is invalid ({exc}); "
                    "nothing was changed"
                ) from None
            texts.append((document, new_text))
        return answer.source, texts, sum(len(e) for e in edits.values())


def _natural(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _text_edit(node: Any) -> TextEdit | None:
    if not isinstance(node, Mapping) or not isinstance(node.get("newText"), str):
        return None
    found = node.get("range")
    if not isinstance(found, Mapping):
        return None
    ends = []
    for key in ("start", "end"):
        point = found.get(key)
        if not isinstance(point, Mapping):
            return None
        line, character = point.get("line"), point.get("character")
        if not (_natural(line) and _natural(character)):
            return None
        ends.append(Position(line=line, character=character))
    return TextEdit(range=Range(start=ends[0], end=ends[1]), new_text=node["newText"])


def workspace_text_edits(edit: Any) -> dict[str, list[TextEdit]] | None:
    """A raw ``WorkspaceEdit``'s text edits by URI (``{}``: none); ``None``
    when it holds file operations or anything malformed."""
    if edit is None:
        return {}
    if not isinstance(edit, Mapping):
        return None
    found: dict[str, list[TextEdit]] = {}
    pairs: list[tuple[Any, Any]] = []
    document_changes = edit.get("documentChanges")
    if document_changes is not None:
        if not isinstance(document_changes, list):
            return None
        for change in document_changes:
            document = change.get("textDocument") if isinstance(change, Mapping) else None
            if not isinstance(document, Mapping):
                return None  # a CreateFile, RenameFile or DeleteFile, or garbage
            pairs.append((document.get("uri"), change.get("edits")))
    else:
        changes = edit.get("changes") or {}
        if not isinstance(changes, Mapping):
            return None
        pairs += list(changes.items())
    for uri, edits in pairs:
        if not isinstance(uri, str) or not isinstance(edits, list):
            return None
        parsed = [_text_edit(e) for e in edits]
        if any(e is None for e in parsed):
            return None
        found.setdefault(uri, []).extend(e for e in parsed if e is not None)
    return found
