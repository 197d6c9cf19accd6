"""Confinement: turning a model-supplied path into a checked workspace target.

A path is relative to the session's folder, or absolute inside one of the
workspace roots; ``file://`` URIs are accepted (host empty or ``localhost``)
and percent-decoded exactly once. Refused, with a message naming the path and
why: NUL bytes, other URI schemes, ``~`` paths, anything outside every root
(compared component-wise, so ``/w/proj-evil`` is not inside ``/w/proj``),
symlinks whose target leaves every root (absolute, relative, chained,
dangling or looping: at most 40 links are followed, each target re-checked),
and anything the :mod:`~rhema_lsp.tools.rules` forbid. Writing, renaming or
deleting a file with more than one hard link is refused (another link may be
outside); reading it is allowed, and a link that is renamed or deleted as an
entry must still point inside.

Resolution yields a symlink-free real path. That is the *check*; every *use*
goes through :class:`~rhema_lsp.tools.confined_fs.ConfinedFS`, which re-walks
the real path with ``O_NOFOLLOW`` on each component, so a component swapped
for a link in between makes the use fail rather than escape. ``..`` is
collapsed lexically before resolution (as editors do); magic links such as
``/proc/self/root`` are outside every root and so refused like any other.

Blocking (``lstat``/``readlink``): call from a worker thread.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import unquote, urlsplit

from rhema_lsp.tools.confined_fs import ConfinedFS
from rhema_lsp.tools.errors import PathRefused
from rhema_lsp.tools.rules import forbidden_reason

__all__ = ["Access", "Target", "Workspace"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):")
_MAX_LINKS = 40


class Access(StrEnum):
    """How a target will be used, which decides whether its last link is followed."""

    READ = "read"
    """Read contents: every link is followed (inside the roots)."""
    WRITE = "write"
    """Write contents: a final link is refused, never followed."""
    ENTRY = "entry"
    """Rename or delete the directory entry itself: a final link is the link."""


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved, confined path.

    Attributes
    ----------
    requested
        The path as the model gave it.
    path
        The absolute real path (no symlinks, except a final one for ``ENTRY``).
    root
        The workspace root holding it.
    kind
        ``file``, ``dir``, ``symlink``, ``other`` or ``missing``.
    """

    requested: str
    path: Path
    root: Path
    kind: str

    @property
    def parts(self) -> tuple[str, ...]:
        """Components below the root."""
        return self.path.relative_to(self.root).parts

    @property
    def uri(self) -> str:
        """The ``file://`` URI of :attr:`path`."""
        return self.path.as_uri()

    @property
    def exists(self) -> bool:
        """Whether anything is at :attr:`path`."""
        return self.kind != "missing"


def _kind(info: os.stat_result | None) -> str:
    if info is None:
        return "missing"
    if stat.S_ISLNK(info.st_mode):
        return "symlink"
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if stat.S_ISREG(info.st_mode):
        return "file"
    return "other"


class Workspace:
    """The roots, the session folder, and path resolution confined to them.

    Parameters
    ----------
    roots
        The workspace folders (real paths are taken once here).
    folder
        The session's folder, inside one of ``roots``; relative paths start here.
    """

    def __init__(self, roots: Sequence[Path], folder: Path) -> None:
        if not roots:
            raise ValueError("at least one workspace root is required")
        self.fs = ConfinedFS(roots)
        self.roots = self.fs.roots
        self.folder = Path(os.path.realpath(folder))
        if self.fs.root_of(self.folder) is None:
            raise ValueError(f"session folder {folder} is not inside a workspace root")

    def display(self, path: Path) -> str:
        """``path`` relative to the session folder when inside it, else absolute."""
        if path == self.folder:
            return "."
        if path.is_relative_to(self.folder):
            return path.relative_to(self.folder).as_posix()
        return str(path)

    def _lexical(self, raw: object) -> Path:
        if not isinstance(raw, str) or not raw.strip():
            raise PathRefused(f"path {raw!r}: expected a non-empty string")
        shown = raw if len(raw) <= 200 else raw[:200] + "..."
        if "\x00" in raw:
            raise PathRefused(f"{shown!r}: contains a NUL byte")
        text = raw
        scheme = _SCHEME.match(raw)
        if scheme is not None:
            if scheme.group(1).lower() != "file":
                raise PathRefused(
                    f"{shown}: only workspace paths and file:// URIs are accepted, "
                    f"not {scheme.group(1)}: URIs"
                )
            parts = urlsplit(raw)
            if parts.netloc not in ("", "localhost"):
                raise PathRefused(f"{shown}: file URI names a remote host {parts.netloc!r}")
            if parts.query or parts.fragment:
                raise PathRefused(f"{shown}: file URI has a query or fragment")
            text = unquote(parts.path)
            if "\x00" in text:
                raise PathRefused(f"{shown}: decodes to a path with a NUL byte")
            if not text.startswith("/"):
                raise PathRefused(f"{shown}: file URI without an absolute path")
        if text.startswith("~"):
            raise PathRefused(
                f"{shown}: home-relative (~) paths are not expanded; give a path inside "
                "the workspace (./~name for a file really named so)"
            )
        path = Path(text)
        if not path.is_absolute():
            path = self.folder / path
        return Path(os.path.normpath(path))

    def resolve(self, raw: object, access: Access = Access.READ) -> Target:
        """Check ``raw`` and return its confined real target.

        Raises
        ------
        PathRefused
            When the path is malformed, leaves every root, or is forbidden.
        """
        lexical = self._lexical(raw)
        shown = str(raw)
        root = self.fs.root_of(lexical)
        if root is None:
            raise PathRefused(
                f"{shown}: outside the workspace folders ({', '.join(map(str, self.roots))})"
            )
        reason = forbidden_reason(lexical.relative_to(root).parts)
        if reason is not None:
            raise PathRefused(f"{shown}: {reason}")
        follow_last = access is Access.READ
        try:
            real, info = self._physical(
                shown, root, list(lexical.relative_to(root).parts), follow_last
            )
        except OSError as exc:
            raise PathRefused(f"{shown}: cannot resolve ({os.strerror(exc.errno or 0)})") from exc
        real_root = self.fs.root_of(real)
        if real_root is None:  # pragma: no cover - _physical guarantees containment
            raise PathRefused(f"{shown}: resolves outside the workspace")
        reason = forbidden_reason(real.relative_to(real_root).parts)
        if reason is not None:
            raise PathRefused(f"{shown}: resolves to {real}: {reason}")
        kind = _kind(info)
        if access is Access.WRITE and kind == "symlink":
            raise PathRefused(
                f"{shown}: is a symbolic link; writes never follow one (edit its target instead)"
            )
        if access is Access.ENTRY and kind == "symlink":
            # Renaming or deleting the link itself is harmless, but a link
            # aimed outside the workspace is refused outright.
            try:
                self._physical(shown, real_root, list(real.relative_to(real_root).parts), True)
            except OSError as exc:
                raise PathRefused(
                    f"{shown}: cannot resolve ({os.strerror(exc.errno or 0)})"
                ) from exc
        if access is not Access.READ and kind == "file" and info is not None and info.st_nlink > 1:
            raise PathRefused(
                f"{shown}: has {info.st_nlink} hard links and may be the same file as one "
                "outside the workspace; refusing to change it"
            )
        return Target(requested=shown, path=real, root=real_root, kind=kind)

    def _physical(
        self, shown: str, root: Path, parts: list[str], follow_last: bool
    ) -> tuple[Path, os.stat_result | None]:
        """Walk ``parts`` below ``root`` like ``realpath``, refusing any link
        that leaves every root. Returns the real path and its ``lstat``."""
        current = root
        links = 0
        while parts:
            name = parts.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                current = current.parent
                if self.fs.root_of(current) is None:
                    raise PathRefused(f"{shown}: a symbolic link leads outside the workspace")
                info = os.lstat(current)
                continue
            candidate = current / name
            try:
                info = os.lstat(candidate)
            except FileNotFoundError:
                if any(part == ".." for part in parts):
                    raise PathRefused(f"{shown}: '..' after a missing component") from None
                missing = candidate.joinpath(*[p for p in parts if p not in ("", ".")])
                return missing, None
            except NotADirectoryError:
                raise PathRefused(f"{shown}: {current} is not a directory") from None
            is_last = not parts
            if stat.S_ISLNK(info.st_mode) and (follow_last or not is_last):
                links += 1
                if links > _MAX_LINKS:
                    raise PathRefused(f"{shown}: too many levels of symbolic links (a loop?)")
                target = os.readlink(candidate)
                if "\x00" in target:  # pragma: no cover - the kernel forbids it
                    raise PathRefused(f"{shown}: symbolic link with a NUL byte")
                if os.path.isabs(target):
                    absolute = Path(os.path.normpath(target))
                    new_root = self.fs.root_of(absolute)
                    if new_root is None:
                        raise PathRefused(
                            f"{shown}: symbolic link {candidate} points outside the workspace "
                            f"(to {target})"
                        )
                    current = new_root
                    parts = list(absolute.relative_to(new_root).parts) + parts
                else:
                    parts = list(Path(target).parts) + parts
                    if Path(target).is_absolute():  # pragma: no cover - handled above
                        raise PathRefused(f"{shown}: unexpected absolute link")
                continue
            if not is_last and not stat.S_ISDIR(info.st_mode):
                raise PathRefused(f"{shown}: {candidate} is not a directory")
            current = candidate
        return current, os.lstat(current)
