"""The one confinement gate: every path from outside the agent's code crosses here.

Paths reach the agent through many doors: a tool's arguments (from the
model), the ``context`` URIs of ``rhema.turn``, ``rhema.step`` and
``rhema.edit`` (from the editor), the files a rewind restores (from the
session store, which a cloned repository could have crafted), the files an
ACP turn fetches through the client. Each door asks :class:`Gate`, and the
gate keeps one set of rules for all of them:

- :meth:`Gate.resolve` turns the raw path or ``file://`` URI into a confined
  :class:`~rhema_lsp.tools.workspace.Target` (the rules are
  :class:`~rhema_lsp.tools.workspace.Workspace`'s: inside a workspace
  folder, symlinks and ``..`` included, never ``.git`` or ``.rhema``), in a
  worker thread, since resolving touches the disk.
- :meth:`Gate.read` reads a target's text: a protected file (``.env*``,
  keys: :func:`~rhema_lsp.tools.rules.read_confirmation_reason`) only after
  the user allows it, the editor's buffer before the disk, only regular
  files (a FIFO, a device or a socket is refused without a blocking open),
  at most ``limit`` bytes, and never on the event loop.
- :meth:`Gate.read_attachment` is :meth:`Gate.read_document` that also
  takes an image (by its bytes' signature) as bytes, within its own limit.
- :meth:`Gate.read_document` is :meth:`read` for a document the editor
  names: a document that exists only in the editor (``untitled:``) is its
  buffer; a ``file://`` document is confined and read like any other path,
  and, read from disk, must not have other hard links (it may be the same
  file as one outside the workspace). The tools may read such a file
  (package managers such as pnpm hard-link every dependency into
  ``node_modules``); an attachment has no such reason, and the user can
  still attach it from an open buffer.
- :meth:`Gate.head` is the start of a file the agent reads of its own
  accord (a project rules file): confined like the rest, never a protected
  file (refused, not asked about: nobody asked to read it), the buffer
  before the disk, a regular file without other hard links, at most
  ``limit`` bytes of it (cut on a character boundary) and its full size.
- :func:`unsafe_root_reason` (the policy of :mod:`~rhema_lsp.tools.roots`,
  re-exported for the doors) says why a folder may not be a workspace root
  at all (``/``, the home directory or a folder above it, the system's own
  trees): confining to it would confine nothing.

Every refusal is a :class:`~rhema_lsp.tools.errors.ToolError` naming the
path and why; callers at other doors map it to their own errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from rhema_lsp.engine import sniff_image
from rhema_lsp.tools.editor import DENY, Editor
from rhema_lsp.tools.errors import PathRefused, ToolError
from rhema_lsp.tools.reading import MAX_FILE_BYTES, decode_file
from rhema_lsp.tools.roots import unsafe_root_reason
from rhema_lsp.tools.rules import read_confirmation_reason
from rhema_lsp.tools.workspace import Access, Target, Workspace

__all__ = [
    "ALLOW_READ",
    "Gate",
    "Head",
    "Snapshot",
    "protected_reason",
    "unsafe_root_reason",
]

ALLOW_READ = "Allow"
"""The approving choice of a protected read's question."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A document's text as the gate read it.

    Attributes
    ----------
    target
        The confined path.
    text
        The text (``None``: the file does not exist).
    version
        The editor's version when the document is open, else ``None``.
    is_open
        Whether the text came from the editor's buffer.
    """

    target: Target
    text: str | None
    version: int | None
    is_open: bool


@dataclass(frozen=True, slots=True)
class Head:
    """The start of a document (:meth:`Gate.head`): at most the limit's bytes
    of its text, and the whole text's size in bytes."""

    text: str
    size: int

    @property
    def cut(self) -> bool:
        """Whether the text is shorter than the document."""
        return len(self.text.encode("utf-8", "surrogatepass")) < self.size


def _head_of(data: bytes, limit: int) -> bytes:
    """``data`` cut to at most ``limit`` bytes on a UTF-8 character boundary."""
    if len(data) <= limit:
        return data
    end = limit
    while end > 0 and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[:end]


def protected_reason(target: Target) -> str | None:
    """Why reading ``target`` needs the user's say-so (its real path's name
    or the name it was asked by), or ``None``."""
    return read_confirmation_reason(target.parts) or read_confirmation_reason(
        [Path(target.requested).name]
    )


def _too_large(shown: str, size: int, limit: int) -> ToolError:
    return ToolError(
        f"{shown}: {size:,} bytes is too large to read (limit {limit:,}); "
        "use grep to find what you need"
    )


def _capped(shown: str, text: str, limit: int) -> str:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise _too_large(shown, size, limit)
    return text


class Gate:
    """The confinement gate of one workspace (see the module docstring).

    Parameters
    ----------
    ws
        The roots, the session folder and the confinement rules.
    editor
        Open documents, and the user to ask before a protected read.
    """

    def __init__(self, ws: Workspace, editor: Editor) -> None:
        self.ws = ws
        self.editor = editor

    async def resolve(self, raw: object, access: Access = Access.READ) -> Target:
        """``raw`` (a path or ``file://`` URI) as a confined target.

        Raises
        ------
        PathRefused
            The path is malformed, outside every workspace folder, or forbidden.
        """
        return await anyio.to_thread.run_sync(self.ws.resolve, raw, access)

    async def allow_read(self, target: Target, *, attached: bool = False) -> None:
        """Ask the user first when ``target`` may hold secrets.

        Raises
        ------
        PathRefused
            The user did not allow it (declined, dismissed or timed out).
        """
        reason = protected_reason(target)
        if reason is None:
            return
        shown = self.ws.display(target.path)
        how = " (attached as context)" if attached else ""
        answer = await self.editor.confirm(
            f"Rhema wants to read {shown}{how}: {reason}. Allow?", [DENY, ALLOW_READ]
        )
        if answer != ALLOW_READ:
            raise PathRefused(f"{shown}: the user did not allow reading it ({reason})")

    async def snapshot(
        self, target: Target, *, limit: int = MAX_FILE_BYTES, linked: bool = True
    ) -> Snapshot:
        """The text of an already resolved (and allowed) ``target``: the
        editor's buffer when open, else the file, read in a worker thread.

        Parameters
        ----------
        linked
            Whether a file with other hard links may be read from disk.

        Raises
        ------
        ToolError
            A directory, not a regular file, binary, not UTF-8, over
            ``limit``, or (unless ``linked``) hard-linked elsewhere.
        """
        document = self.editor.open_document(target.uri)
        if document is not None:
            text = _capped(target.requested, document.text, limit)
            return Snapshot(target, text, document.version, True)
        if target.kind == "missing":
            return Snapshot(target, None, None, False)
        if target.kind == "dir":
            raise ToolError(f"{target.requested}: is a directory; use list_dir")
        if target.kind != "file":
            raise ToolError(f"{target.requested}: not a regular file")
        text = await anyio.to_thread.run_sync(self._read_disk, target, limit, linked)
        return Snapshot(target, text, None, False)

    def _refuse_linked(self, target: Target, advice: str = "") -> None:
        """Refuse a file with other hard links (one may be outside the workspace)."""
        info = self.ws.fs.lstat(target.path)
        if info is not None and info.st_nlink > 1:
            raise PathRefused(
                f"{target.requested}: has {info.st_nlink} hard links and may be the same "
                f"file as one outside the workspace{advice}"
            )

    def _read_disk(self, target: Target, limit: int, linked: bool) -> str:
        if not linked:
            self._refuse_linked(target, "; open it in the editor to attach it")
        data, size = self.ws.fs.read_bytes(target.path, max_bytes=limit + 1)
        if size > limit:
            if b"\x00" in data[:8192]:
                decode_file(target, data[:8192], size)  # says "binary" instead
            raise _too_large(target.requested, size, limit)
        return decode_file(target, data, size)

    async def head(self, target: Target, limit: int) -> Head:
        """The first ``limit`` bytes of resolved ``target``'s text (see the
        module docstring).

        Raises
        ------
        ToolError
            A protected file, a missing one, not a regular file, hard-linked
            elsewhere, binary or not UTF-8.
        """
        reason = protected_reason(target)
        if reason is not None:
            raise PathRefused(f"{target.requested}: not read of the agent's own accord ({reason})")
        document = self.editor.open_document(target.uri)
        if document is not None:
            data = document.text.encode("utf-8", "surrogatepass")
            return Head(_head_of(data, limit).decode("utf-8", "surrogatepass"), len(data))
        if target.kind != "file":
            raise ToolError(f"{target.requested}: not a regular file")
        return await anyio.to_thread.run_sync(self._head_disk, target, limit)

    def _head_disk(self, target: Target, limit: int) -> Head:
        self._refuse_linked(target)
        data, size = self.ws.fs.read_bytes(target.path, max_bytes=limit + 4)
        return Head(decode_file(target, _head_of(data, limit), size), size)

    async def read(
        self, raw: object, *, limit: int = MAX_FILE_BYTES, attached: bool = False
    ) -> Snapshot:
        """Resolve ``raw``, ask before a protected read, read its text.

        Parameters
        ----------
        attached
            The path is context the user attached rather than a path the
            model chose (the question says so).

        Raises
        ------
        ToolError
            Refused (outside, forbidden, not allowed) or unreadable.
        """
        target = await self.resolve(raw, Access.READ)
        await self.allow_read(target, attached=attached)
        return await self.snapshot(target, limit=limit)

    async def read_document(self, uri: str, *, limit: int = MAX_FILE_BYTES) -> str:
        """The text of a document the editor names as context.

        A ``file://`` document is confined and asked for like :meth:`read`;
        then its buffer (under the editor's own spelling of the URI, or the
        real path's) wins over the disk. A document of another scheme
        (``untitled:``) exists only in the editor: its buffer is the text,
        and there is nothing to read if the editor does not have it open.

        Raises
        ------
        ToolError
            Refused or unreadable, as :meth:`read`.
        """
        read = await self.read_attachment(uri, limit=limit)
        assert isinstance(read, str)  # no image limit: never bytes
        return read

    async def read_attachment(
        self, uri: str, *, limit: int = MAX_FILE_BYTES, image_limit: int = 0
    ) -> str | bytes:
        """A document the editor names as context: its text as
        :meth:`read_document` reads it, or, with ``image_limit``, the bytes
        of a file on disk whose signature says it is an image
        (:func:`~rhema_lsp.engine.sniff_image`; the name does not count), at
        most ``image_limit`` of them.

        Raises
        ------
        ToolError
            Refused or unreadable, as :meth:`read`; an image over ``image_limit``.
        """
        if not uri.lower().startswith("file:"):
            document = self.editor.open_document(uri)
            if document is None:
                raise PathRefused(f"{uri}: not a file:// URI and not a document open in the editor")
            return _capped(uri, document.text, limit)
        target = await self.resolve(uri, Access.READ)
        await self.allow_read(target, attached=True)
        document = self.editor.open_document(uri)
        if document is not None:
            return _capped(uri, document.text, limit)
        if image_limit and target.kind == "file":
            image = await anyio.to_thread.run_sync(self._read_image, target, image_limit)
            if image is not None:
                return image
        snap = await self.snapshot(target, limit=limit, linked=False)
        if snap.text is None:
            raise ToolError(f"{uri}: no such file")
        return snap.text

    def _read_image(self, target: Target, limit: int) -> bytes | None:
        """The bytes of ``target`` when they are an image, ``None`` when not."""
        head, _ = self.ws.fs.read_bytes(target.path, max_bytes=16)
        if sniff_image(head) is None:
            return None
        self._refuse_linked(target, "; open it in the editor to attach it")
        data, size = self.ws.fs.read_bytes(target.path, max_bytes=limit + 1)
        if size > limit:
            raise ToolError(
                f"{target.requested}: the image is {size:,} bytes, over the {limit:,} an "
                "attached image may hold; attach a smaller or downscaled copy"
            )
        return data
