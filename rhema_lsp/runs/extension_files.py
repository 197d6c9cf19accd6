"""The files users keep their extensions in: where they are, how one is read.

Skills (:mod:`~rhema_lsp.runs.skills`) and custom slash commands
(:mod:`~rhema_lsp.runs.slash`) are Markdown files with an optional front
matter block, in folders of the workspace (``.rhema/``, ``.agents/``,
``.claude/``, ``.github/``) and of the user config directory (beside the
user config file, :func:`~rhema_lsp.mcp.userfile.user_config_path`). They
are text for the model and never run anything by themselves, so they are
read without asking; the rules every read keeps:

- **Confined.** A workspace folder of extensions is used only when its real
  path is inside the session folder's real path (a ``.claude`` that is a
  symbolic link out of the workspace is refused), and a file only when its
  real path is inside that folder's; the last component is opened with
  ``O_NOFOLLOW``, never a FIFO or device (``O_NONBLOCK``, then ``fstat``),
  never a workspace file with other hard links.
- **Capped.** A file is read up to :data:`FILE_CAP` bytes: a longer one
  is cut there (on a character boundary) with a note saying so, or, for a
  file that must be whole (``whole``: a settings file), is a problem, the
  file unused; a folder gives at most :data:`MAX_ENTRIES`
  entries, in name order, so the result is the same every time.
- **Never fatal.** Whatever is wrong with a file is a *problem* string the
  caller reports (log and ``rhema.status``); the others are still used.

The front matter is the YAML subset these files use (:func:`split_front_matter`):
``key: value`` lines, a value quoted or not, a list as ``[a, b]`` or as
``- item`` lines below its key. PyYAML is not a dependency, and nothing else
of YAML is needed. Blocking reads: call these in a worker thread.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FILE_CAP",
    "MAX_ENTRIES",
    "FrontMatter",
    "TextFile",
    "read_text_file",
    "split_front_matter",
    "text_of",
    "workspace_dir",
]

FILE_CAP = 65_536
"""The most bytes of one skill or command file."""

MAX_ENTRIES = 200
"""The most entries read from one folder of extensions."""

FrontMatter = dict[str, str | list[str]]
"""A front matter block: each key's text, or list of texts."""

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class TextFile:
    """One file read: its path, its text, or why it was not read."""

    path: Path
    text: str = ""
    problem: str | None = None


def workspace_dir(folder: Path, relative: str) -> Path | None:
    """``folder / relative`` when it is a directory whose real path is in
    ``folder``'s, else ``None`` (missing, or a link out of the workspace)."""
    candidate = folder / relative
    try:
        real = candidate.resolve(strict=True)
        base = folder.resolve(strict=True)
    except OSError:
        return None
    if not real.is_dir() or not real.is_relative_to(base):
        return None
    return real


def read_text_file(path: Path, inside: Path, *, workspace: bool, whole: bool = False) -> TextFile:
    """The UTF-8 text of ``path``, which must really be inside ``inside``
    (see the module docstring; ``workspace`` refuses hard-linked files,
    ``whole`` refuses a file over the cap rather than cut it)."""
    try:
        real = path.resolve(strict=True)
    except OSError:
        return TextFile(path, problem="cannot be found")
    if not real.is_relative_to(inside):
        return TextFile(path, problem="is a link out of its folder")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as exc:
        return TextFile(path, problem=f"cannot be opened ({os.strerror(exc.errno or 0)})")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return TextFile(path, problem="is not a regular file")
        if workspace and info.st_nlink > 1:
            return TextFile(path, problem="has other hard links")
        if whole and info.st_size > FILE_CAP:
            return TextFile(path, problem=f"is {info.st_size:,} bytes (at most {FILE_CAP:,})")
        data = os.read(fd, FILE_CAP + 4)
    except OSError as exc:
        return TextFile(path, problem=f"cannot be read ({os.strerror(exc.errno or 0)})")
    finally:
        os.close(fd)
    if whole and len(data) > FILE_CAP:
        return TextFile(path, problem=f"is over {FILE_CAP:,} bytes")
    end = min(len(data), FILE_CAP)
    while 0 < end < len(data) and (data[end] & 0xC0) == 0x80:
        end -= 1
    if b"\x00" in data[:end]:
        return TextFile(path, problem="is binary")
    try:
        text = data[:end].decode("utf-8")
    except UnicodeDecodeError:
        return TextFile(path, problem="is not valid UTF-8")
    if end < len(data):
        size = max(info.st_size, len(data))
        text += f"\n[rhema: {path.name} is {size:,} bytes; only its first {FILE_CAP:,} are given.]"
    return TextFile(path, text)


def _scalar(raw: str) -> str:
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _value(raw: str) -> str | list[str]:
    value = raw.strip()
    if value.startswith("[") and value.endswith("]"):
        return [_scalar(item) for item in value[1:-1].split(",") if item.strip()]
    return _scalar(value)


def split_front_matter(text: str) -> tuple[FrontMatter, str]:
    """``text``'s front matter and its body (the whole text without one).

    Raises
    ------
    ValueError
        The block is not closed, or a line is neither ``key: value`` nor a
        list item.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        raise ValueError("its front matter has no closing ---") from None
    matter: FrontMatter = {}
    last: str | None = None
    for number, line in enumerate(lines[1:end], 2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = line.strip()
        if item.startswith("- ") and last is not None:
            previous = matter[last]
            items = previous if isinstance(previous, list) else ([previous] if previous else [])
            matter[last] = [*items, _scalar(item[2:])]
            continue
        if line[0].isspace() and last is not None and isinstance(matter[last], str):
            matter[last] = f"{matter[last]} {item}".strip()  # a folded continuation
            continue
        match = _KEY.match(line)
        if match is None:
            raise ValueError(f"line {number} of its front matter is not `key: value`")
        last = match.group(1)
        value = match.group(2).strip()
        matter[last] = "" if value in ("|", ">", ">-", "|-") else _value(value)
    return matter, "\n".join(lines[end + 1 :]).lstrip("\n")


def text_of(matter: FrontMatter, key: str) -> str:
    """``key``'s value as one line of text ("" when absent)."""
    value = matter.get(key, "")
    return ", ".join(value) if isinstance(value, list) else value
