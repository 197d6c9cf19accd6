"""The search tools: ``grep``, ``find_files`` and ``list_dir``, over ripgrep.

- ``grep`` runs ``rg --json`` (``.gitignore`` respected, ``.git``/``.rhema``
  and secret-looking files — ``.env*``, ``*.pem``, SSH keys — skipped) and
  stops at :data:`GREP_CAP` matches with a "narrow your search" note. Files
  the editor has open are searched in their buffer text instead (the buffer
  wins over disk, unsaved files included) with Python :mod:`re`: the dialect
  differs from ripgrep's Rust regex in corners (``\\p{..}`` classes, some
  flags); a pattern Python cannot compile falls back to the disk matches for
  those files, with a note.
- Each reported disk match is re-read through the confined walk and kept only
  if that line still reads the same: ``rg`` walks by path, so a directory
  swapped for a link mid-search could otherwise leak text from outside.
- ``find_files`` is ``rg --files --glob``; ``list_dir`` builds a tree to a
  depth from ``rg --files`` (so ignored files and empty folders are absent).
  Listed names are checked the same way before they are reported.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import anyio.to_thread

from rhema_lsp.tools.editor import Editor
from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.positions import uri_to_path
from rhema_lsp.tools.ripgrep import COMMON_FLAGS, run_rg
from rhema_lsp.tools.rules import forbidden_reason, read_confirmation_reason
from rhema_lsp.tools.workspace import Access, Target, Workspace

__all__ = ["FIND_CAP", "GREP_CAP", "LIST_CAP", "find_files", "glob_matcher", "grep", "list_dir"]

GREP_CAP = 200
FIND_CAP = 500
LIST_CAP = 500
_LIST_SCAN_CAP = 20_000
_LINE_CAP = 300
_SECRET_GLOBS = ("!.env*", "!*.pem", "!id_rsa*", "!id_dsa*", "!id_ecdsa*", "!id_ed25519*")


def glob_matcher(glob: str) -> Callable[[str], bool]:
    """A predicate on ``/``-separated relative paths approximating rg's
    ``--glob``: a glob without ``/`` matches the file name, ``**`` spans
    folders, ``{a,b}`` alternates, a leading ``!`` negates."""
    negate = glob.startswith("!")
    body = glob[1:] if negate else glob
    pattern = []
    index = 0
    while index < len(body):
        char = body[index]
        if body.startswith("**/", index):
            pattern.append("(?:.*/)?")
            index += 3
            continue
        if body.startswith("**", index):
            pattern.append(".*")
            index += 2
            continue
        if char == "*":
            pattern.append("[^/]*")
        elif char == "?":
            pattern.append("[^/]")
        elif char == "{":
            close = body.find("}", index)
            if close == -1:
                pattern.append(re.escape(char))
            else:
                options = body[index + 1 : close].split(",")
                pattern.append("(?:" + "|".join(re.escape(o) for o in options) + ")")
                index = close + 1
                continue
        elif char == "[":
            close = body.find("]", index + 1)
            if close == -1:
                pattern.append(re.escape(char))
            else:
                pattern.append(body[index : close + 1])
                index = close + 1
                continue
        else:
            pattern.append(re.escape(char))
        index += 1
    compiled = re.compile("".join(pattern) + r"\Z")
    by_name = "/" not in body.strip("/")

    def matches(relative: str) -> bool:
        subject = relative.rsplit("/", 1)[-1] if by_name else relative.lstrip("/")
        return bool(compiled.match(subject)) != negate

    return matches


@dataclass(frozen=True, slots=True)
class _Match:
    path: Path
    line: int
    text: str


def _clip(text: str) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= _LINE_CAP else text[:_LINE_CAP] + " [line truncated]"


def _searched_dir(target: Target) -> tuple[Path, list[str]]:
    if target.kind == "dir":
        return target.path, ["."]
    if target.kind == "file":
        return target.path.parent, ["./" + target.path.name]
    raise ToolError(f"{target.requested}: no such file or directory")


def _buffers_in_scope(ws: Workspace, editor: Editor, target: Target) -> dict[Path, str]:
    scoped: dict[Path, str] = {}
    for document in editor.open_documents():
        path = uri_to_path(document.uri)
        inside = path == target.path or (target.kind == "dir" and path.is_relative_to(target.path))
        if not inside:
            continue
        root = ws.fs.root_of(path)
        if root is None:
            continue
        parts = path.relative_to(root).parts
        if forbidden_reason(parts) or read_confirmation_reason(parts):
            continue
        scoped[path] = document.text
    return scoped


def _verify_lines(ws: Workspace, found: dict[Path, list[_Match]]) -> list[_Match]:
    """Keep the matches whose line reads the same through the confined walk."""
    kept: list[_Match] = []
    for path, matches in found.items():
        try:
            data, _size = ws.fs.read_bytes(path, max_bytes=64 << 20)
        except ToolError:
            continue
        lines = data.split(b"\n")
        for match in matches:
            if match.line - 1 < len(lines):
                actual = lines[match.line - 1].decode("utf-8", "replace")
                if _clip(actual) == match.text:
                    kept.append(match)
    return kept


async def grep(
    ws: Workspace,
    editor: Editor,
    pattern: str,
    path: str,
    glob: str | None,
    ignore_case: bool,
) -> str:
    """Matching lines as ``path:line: text``, at most :data:`GREP_CAP`."""
    target = await anyio.to_thread.run_sync(ws.resolve, path, Access.READ)
    directory, operands = _searched_dir(target)
    if target.kind == "file" and read_confirmation_reason(target.parts):
        raise ToolError(
            f"{target.requested}: {read_confirmation_reason(target.parts)}; grep skips such "
            "files, read it with read_file (which asks the user)"
        )
    buffers = _buffers_in_scope(ws, editor, target)
    args = ["--json", *COMMON_FLAGS, "--max-count", str(GREP_CAP + 1)]
    for secret in _SECRET_GLOBS:
        args += ["--iglob", secret]
    args.append("--ignore-case" if ignore_case else "--case-sensitive")
    if glob:
        args += ["--glob", glob]
    args += ["--regexp", pattern, "--", *operands]
    notes: list[str] = []
    python_regex: re.Pattern[str] | None
    try:
        python_regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        python_regex = None
        if buffers:
            notes.append(
                f"note: open editor buffers were searched on disk instead (Python re: {exc})"
            )
    found: dict[Path, list[_Match]] = {}
    count = 0
    truncated = False
    async with run_rg(ws.fs, directory, args) as (lines, run):
        async for raw in lines:
            event = json.loads(raw)
            if event.get("type") != "match":
                continue
            data = event["data"]
            relative = data["path"].get("text")
            text = data["lines"].get("text")
            if relative is None or text is None:
                continue  # not UTF-8: skipped
            file_path = Path(posixpath.normpath(f"{directory}/{relative}"))
            if python_regex is not None and file_path in buffers:
                continue
            if read_confirmation_reason([file_path.name]) is not None:
                continue  # secret-looking names the exclusion globs missed
            count += 1
            if count > GREP_CAP:
                truncated = True
                break
            found.setdefault(file_path, []).append(
                _Match(file_path, int(data["line_number"]), _clip(text))
            )
    if run.code == 2 and not found and not run.stopped:
        raise ToolError(f"grep {pattern!r}: {run.stderr.strip() or 'ripgrep failed'}")
    matches = await anyio.to_thread.run_sync(_verify_lines, ws, found)
    if python_regex is not None:
        include = glob_matcher(glob) if glob else None
        for file_path, text in buffers.items():
            relative = file_path.relative_to(directory).as_posix()
            if include is not None and not include(relative):
                continue
            for number, line in enumerate(text.split("\n"), start=1):
                if python_regex.search(line.rstrip("\r")):
                    matches.append(_Match(file_path, number, _clip(line)))
    matches.sort(key=lambda m: (str(m.path), m.line))
    if len(matches) > GREP_CAP:
        matches = matches[:GREP_CAP]
        truncated = True
    if not matches:
        return f"no matches for {pattern!r} in {ws.display(target.path)}"
    body = [f"{ws.display(m.path)}:{m.line}: {m.text}" for m in matches]
    if truncated:
        body.append(
            f"[showing the first {GREP_CAP} matches; narrow your search with a more "
            "specific pattern, a path or a glob]"
        )
    return "\n".join(notes + body)


async def _rg_files(
    ws: Workspace, directory: Path, args: list[str], cap: int
) -> tuple[list[str], bool]:
    names: list[str] = []
    truncated = False
    async with run_rg(ws.fs, directory, ["--files", *COMMON_FLAGS, *args]) as (lines, run):
        async for raw in lines:
            if len(names) >= cap:
                truncated = True
                break
            name = raw.decode("utf-8", "replace")
            names.append(name[2:] if name.startswith("./") else name)
    if run.code == 2 and not names and not run.stopped:
        raise ToolError(run.stderr.strip() or "ripgrep failed")
    return names, truncated


def _existing(ws: Workspace, directory: Path, names: list[str]) -> list[str]:
    """The names that exist below ``directory`` through the confined walk."""
    kept = []
    for name in names:
        try:
            info = ws.fs.lstat(directory / name)
        except ToolError:
            continue
        if info is not None:
            kept.append(name)
    return kept


async def find_files(ws: Workspace, pattern: str, path: str) -> str:
    """Files below ``path`` matching glob ``pattern``, at most :data:`FIND_CAP`."""
    target = await anyio.to_thread.run_sync(ws.resolve, path, Access.READ)
    if target.kind != "dir":
        raise ToolError(f"{target.requested}: not a directory")
    names, truncated = await _rg_files(ws, target.path, ["--glob", pattern], FIND_CAP)
    names = await anyio.to_thread.run_sync(_existing, ws, target.path, names)
    if not names:
        return f"no files match {pattern!r} in {ws.display(target.path)}"
    names.sort()
    body = [ws.display(target.path / name) for name in names]
    if truncated:
        body.append(
            f"[showing the first {FIND_CAP} files; narrow your search with a more "
            "specific pattern or path]"
        )
    return "\n".join(body)


async def list_dir(ws: Workspace, path: str, depth: int) -> str:
    """A tree of ``path`` to ``depth`` levels (files and folders holding files)."""
    target = await anyio.to_thread.run_sync(ws.resolve, path, Access.READ)
    if target.kind != "dir":
        raise ToolError(f"{target.requested}: not a directory; use read_file")
    names, scan_truncated = await _rg_files(ws, target.path, [], _LIST_SCAN_CAP)
    entries: dict[str, int] = {}
    for name in names:
        parts = PurePosixPath(name).parts
        for level in range(1, min(len(parts), depth) + 1):
            is_file = level == len(parts)
            key = "/".join(parts[:level]) + ("" if is_file else "/")
            entries[key] = entries.get(key, 0) + (1 if not is_file and level == depth else 0)
    shown = sorted(entries)
    truncated = len(shown) > LIST_CAP
    shown = shown[:LIST_CAP]
    existing = set(
        await anyio.to_thread.run_sync(
            _existing, ws, target.path, [name.rstrip("/") for name in shown]
        )
    )
    body = []
    for name in shown:
        if name.rstrip("/") not in existing:
            continue
        below = entries[name]
        suffix = f"  ({below} files below)" if name.endswith("/") and below else ""
        body.append(name + suffix)
    header = f"{ws.display(target.path)}/ (depth {depth}; .gitignored files hidden)"
    if not body:
        return header + "\n(empty)"
    if truncated or scan_truncated:
        body.append(f"[listing capped at {LIST_CAP} entries; list a subfolder or lower the depth]")
    return "\n".join([header, *body])
