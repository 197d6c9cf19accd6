"""Race-free file operations below a set of root directories.

Every operation takes an absolute, symlink-free path (as produced by
:class:`~rhema_lsp.tools.workspace.Workspace`) and re-walks it from the root's
directory descriptor one component at a time with ``O_NOFOLLOW``
(``openat`` semantics through ``dir_fd``). A component swapped for a symlink
between the check and this use makes the walk fail with ``ELOOP``/``ENOTDIR``
instead of following it, so nothing outside the roots is ever opened, and the
final component of a write is never followed either. Writes are atomic: a
temporary file in the same directory, ``fsync``, ``rename`` (or ``link`` when
the file must not exist yet), then ``fsync`` of the directory.

All functions are blocking; callers run them in worker threads. Failures
raise :class:`~rhema_lsp.tools.errors.ToolError` naming the path.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from rhema_lsp.tools.errors import PathRefused, ToolError

__all__ = ["ConfinedFS"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _os_message(exc: OSError) -> str:
    return os.strerror(exc.errno) if exc.errno else str(exc)


@contextmanager
def _mapped(path: Path, action: str) -> Iterator[None]:
    """Turn an ``OSError`` into a :class:`ToolError` naming ``path``."""
    try:
        yield
    except OSError as exc:
        raise ToolError(f"{path}: cannot {action} ({_os_message(exc)})") from exc


class ConfinedFS:
    """File operations that cannot leave ``roots``.

    Parameters
    ----------
    roots
        The directories everything must stay below (resolved once here).
    """

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = tuple(Path(os.path.realpath(root)) for root in roots)

    def root_of(self, path: Path) -> Path | None:
        """The innermost root holding normalised ``path``, or ``None``."""
        best: Path | None = None
        for root in self.roots:
            if path.is_relative_to(root) and (best is None or len(root.parts) > len(best.parts)):
                best = root
        return best

    def split(self, path: Path) -> tuple[Path, tuple[str, ...]]:
        """The innermost root holding ``path`` and the components below it."""
        path = Path(os.path.normpath(path))
        best = self.root_of(path)
        if best is None:
            raise PathRefused(f"{path}: outside every workspace folder")
        parts = path.relative_to(best).parts
        if any(part in ("..", ".") for part in parts):
            raise PathRefused(f"{path}: not a normalised path")
        return best, parts

    @staticmethod
    def _descend(fd: int, part: str, shown: Path, create: bool) -> int:
        """Open directory ``part`` below ``fd`` without following a link."""
        try:
            try:
                return os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                return os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise PathRefused(
                    f"{shown}: is a symbolic link or not a directory (it may have "
                    "changed while in use); refusing to follow it"
                ) from exc
            raise

    @contextmanager
    def _walk(self, root: Path, parts: Sequence[str], *, create: bool = False) -> Iterator[int]:
        """A descriptor of ``root/parts`` reached without following any link."""
        fd = self.open_walk(root, parts, create=create)
        try:
            yield fd
        finally:
            os.close(fd)

    def open_walk(self, root: Path, parts: Sequence[str], *, create: bool = False) -> int:
        """Like :meth:`_walk`, returning a descriptor the caller must close."""
        fd = os.open(root, _DIR_FLAGS)
        try:
            for index, part in enumerate(parts):
                next_fd = self._descend(fd, part, root.joinpath(*parts[: index + 1]), create)
                os.close(fd)
                fd = next_fd
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_directory(self, path: Path) -> int:
        """A descriptor of directory ``path`` the caller must close."""
        root, parts = self.split(path)
        try:
            return self.open_walk(root, parts)
        except FileNotFoundError as exc:
            raise ToolError(f"{path}: no such directory") from exc
        except OSError as exc:
            raise ToolError(f"{path}: cannot open ({_os_message(exc)})") from exc

    @contextmanager
    def _parent(self, path: Path, *, create: bool = False) -> Iterator[tuple[int, str]]:
        root, parts = self.split(path)
        if not parts:
            raise PathRefused(f"{path}: is a workspace folder itself")
        try:
            with self._walk(root, parts[:-1], create=create) as fd:
                yield fd, parts[-1]
        except FileNotFoundError as exc:
            raise ToolError(f"{path}: its folder does not exist") from exc

    def _lstat(self, path: Path) -> os.stat_result | None:
        """``lstat`` of ``path`` (links not followed), ``None`` if missing."""
        root, parts = self.split(path)
        if not parts:
            return os.stat(root)
        try:
            with self._walk(root, parts[:-1]) as fd:
                return os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def _read_bytes(self, path: Path, max_bytes: int | None = None) -> tuple[bytes, int]:
        """Up to ``max_bytes`` of regular file ``path``, and its full size."""
        with self._parent(path) as (parent, name):
            try:
                fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
            except FileNotFoundError as exc:
                raise ToolError(f"{path}: no such file") from exc
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise PathRefused(f"{path}: is a symbolic link; refusing to follow it") from exc
                raise ToolError(f"{path}: cannot open ({_os_message(exc)})") from exc
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise ToolError(f"{path}: is a directory; use list_dir")
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"{path}: not a regular file")
            chunks: list[bytes] = []
            wanted = info.st_size if max_bytes is None else min(max_bytes, info.st_size)
            remaining = wanted
            while remaining > 0:
                chunk = os.read(fd, min(remaining, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            return b"".join(chunks), info.st_size
        finally:
            os.close(fd)

    def _write_atomic(self, path: Path, data: bytes, *, must_not_exist: bool = False) -> None:
        """Replace (or create) regular file ``path`` with ``data`` atomically.

        Refuses a final symlink, a non-regular file and a file with other hard
        links (it may be a window onto a file outside the workspace).
        """
        with self._parent(path, create=True) as (parent, name):
            try:
                current = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                current = None
            mode = 0o666
            if current is not None:
                if must_not_exist:
                    raise ToolError(f"{path}: already exists")
                if stat.S_ISLNK(current.st_mode):
                    raise PathRefused(f"{path}: is a symbolic link; refusing to write through it")
                if not stat.S_ISREG(current.st_mode):
                    raise ToolError(f"{path}: not a regular file")
                if current.st_nlink > 1:
                    raise PathRefused(
                        f"{path}: has {current.st_nlink} hard links and may alias a file outside "
                        "the workspace; refusing to write it"
                    )
                mode = stat.S_IMODE(current.st_mode)
            temp = f".{name}.rhema-{secrets.token_hex(6)}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(temp, flags, mode, dir_fd=parent)
            try:
                try:
                    if current is not None:
                        os.fchmod(fd, mode)
                    view = memoryview(data)
                    while view:
                        written = os.write(fd, view)
                        view = view[written:]
                    os.fsync(fd)
                finally:
                    os.close(fd)
                if must_not_exist:
                    os.link(temp, name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
                    os.unlink(temp, dir_fd=parent)
                else:
                    os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
                os.fsync(parent)
            except BaseException:
                with suppress(FileNotFoundError):
                    os.unlink(temp, dir_fd=parent)
                raise

    def _rename(self, source: Path, target: Path, *, overwrite: bool = False) -> None:
        """Rename the entry ``source`` (a link is renamed, not followed)."""
        with self._parent(source) as (src_parent, src_name):
            try:
                os.stat(src_name, dir_fd=src_parent, follow_symlinks=False)
            except FileNotFoundError as exc:
                raise ToolError(f"{source}: no such file or directory") from exc
            with self._parent(target, create=True) as (dst_parent, dst_name):
                if not overwrite:
                    try:
                        os.stat(dst_name, dir_fd=dst_parent, follow_symlinks=False)
                    except FileNotFoundError:
                        pass
                    else:
                        raise ToolError(f"{target}: already exists")
                os.rename(src_name, dst_name, src_dir_fd=src_parent, dst_dir_fd=dst_parent)
                os.fsync(dst_parent)

    def _delete(self, path: Path, *, recursive: bool = False) -> None:
        """Delete the entry ``path``; a directory only when ``recursive``."""
        with self._parent(path) as (parent, name):
            try:
                info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError as exc:
                raise ToolError(f"{path}: no such file or directory") from exc
            if stat.S_ISDIR(info.st_mode):
                if not recursive:
                    os.rmdir(name, dir_fd=parent)
                else:
                    # fd-based on Linux: never follows a link swapped in mid-way.
                    shutil.rmtree(name, dir_fd=parent)
            else:
                os.unlink(name, dir_fd=parent)
            os.fsync(parent)

    # -- public, with OS errors mapped -----------------------------------------

    def lstat(self, path: Path) -> os.stat_result | None:
        """``lstat`` of ``path`` (links not followed), ``None`` if missing."""
        with _mapped(path, "inspect"):
            return self._lstat(path)

    def read_bytes(self, path: Path, max_bytes: int | None = None) -> tuple[bytes, int]:
        """Up to ``max_bytes`` of regular file ``path``, and its full size."""
        with _mapped(path, "read"):
            return self._read_bytes(path, max_bytes)

    def write_atomic(self, path: Path, data: bytes, *, must_not_exist: bool = False) -> None:
        """Replace (or create) regular file ``path`` with ``data`` atomically.

        Refuses a final symlink, a non-regular file and a file with other hard
        links (it may be a window onto a file outside the workspace).
        """
        with _mapped(path, "write"):
            self._write_atomic(path, data, must_not_exist=must_not_exist)

    def rename(self, source: Path, target: Path, *, overwrite: bool = False) -> None:
        """Rename the entry ``source`` (a link is renamed, not followed)."""
        with _mapped(source, "rename"):
            self._rename(source, target, overwrite=overwrite)

    def delete(self, path: Path, *, recursive: bool = False) -> None:
        """Delete the entry ``path``; a directory only when ``recursive``."""
        with _mapped(path, "delete"):
            self._delete(path, recursive=recursive)
