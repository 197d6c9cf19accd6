"""The documents an editor attaches to a prompt, read through the gate.

``rhema.turn``, ``rhema.step`` and ``rhema.edit`` carry ``context``: the
URIs (with ranges and diagnostics) of what the user pointed at. They come
from the client, so they get no trust the model's paths do not: each is read
through the workspace's :class:`~rhema_lsp.tools.gate.Gate` (inside a
workspace folder, never ``.git`` or ``.rhema``, protected files asked for,
regular files only, off the event loop), and at most
:data:`CONTEXT_MAX_BYTES` of it. A refused or unreadable attachment refuses
the whole prompt with :class:`ContextRefused` before anything reaches the
model. A file whose bytes are an image (PNG, JPEG, GIF, WebP: by content,
not by name) is an image attachment (:func:`read_attachments`), at most
:data:`~rhema_lsp.engine.IMAGE_MAX_BYTES`; a file named ``.png`` that is
not one is read as text, and refused as binary.

A ref naming a ``server`` is that MCP server's resource (an ``@``-mention of
``rhema.mcpResources``): it is read through the server as the
``read_mcp_resource`` tool reads it (:meth:`rhema_lsp.mcp.McpHub.read_resource`:
text in full, binary contents as a note), capped as a file is, and a failed
read refuses the prompt the same way; it takes no range and no diagnostics.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types

from rhema_lsp.contract import ContextRef
from rhema_lsp.engine import IMAGE_MAX_BYTES, ImagePart, ImageRefused, image_part
from rhema_lsp.mcp import McpError
from rhema_lsp.runs.prompts import ContextPiece, problem_line
from rhema_lsp.tools import Editor, LineIndex, ToolError, Workspace, uri_to_path
from rhema_lsp.tools.gate import Gate

__all__ = [
    "CONTEXT_MAX_BYTES",
    "Attachments",
    "ContextRefused",
    "ResourceReader",
    "read_attachments",
    "read_context",
]

CONTEXT_MAX_BYTES = 1 << 20
"""The most one attached document may hold (1 MiB, about 250,000 tokens:
more than any model reads in one go; the agent can page through a larger
file with its tools)."""


ResourceReader = Callable[[str, str], Awaitable[str]]
"""Reads an MCP server's resource as text: ``(server, uri)``; raises ``McpError``."""


class ContextRefused(ValueError):
    """An attached document is refused or cannot be read; the message names it."""


@dataclass(frozen=True, slots=True)
class Attachments:
    """What a prompt's ``context`` holds: text documents, and images (files
    whose bytes are a PNG, JPEG, GIF or WebP image), each in its order."""

    pieces: list[ContextPiece] = field(default_factory=list)
    images: list[ImagePart] = field(default_factory=list)


async def read_context(
    refs: Sequence[ContextRef],
    roots: Sequence[Path],
    folder: Path,
    editor: Editor,
    display: Callable[[Path], str],
    resources: ResourceReader | None = None,
) -> list[ContextPiece]:
    """The attached documents as pieces for the prompt, text only (an image
    is refused as binary).

    Parameters
    ----------
    roots, folder
        The workspace folders and the run's folder: what confines the reads.
    display
        How a path is shown to the model.
    resources
        Reads the MCP resources among ``refs`` (none: they are refused).

    Raises
    ------
    ContextRefused
        A document is outside the workspace, forbidden, declined by the user,
        not a regular text file, too large, or its range does not fit it.
    """
    return (await _read(refs, roots, folder, editor, display, 0, resources)).pieces


async def read_attachments(
    refs: Sequence[ContextRef],
    roots: Sequence[Path],
    folder: Path,
    editor: Editor,
    display: Callable[[Path], str],
    resources: ResourceReader | None = None,
) -> Attachments:
    """The attached documents and images (at most :data:`IMAGE_MAX_BYTES`
    each), read as :func:`read_context` reads.

    Raises
    ------
    ContextRefused
        As :func:`read_context`; an image with a range, or too large.
    """
    return await _read(refs, roots, folder, editor, display, IMAGE_MAX_BYTES, resources)


async def _read(
    refs: Sequence[ContextRef],
    roots: Sequence[Path],
    folder: Path,
    editor: Editor,
    display: Callable[[Path], str],
    image_limit: int,
    resources: ResourceReader | None,
) -> Attachments:
    found = Attachments()
    if not refs:
        return found
    gate = Gate(Workspace(roots, folder), editor)
    for ref in refs:
        if ref.server is not None:
            found.pieces.append(await _resource(ref, resources))
            continue
        try:
            read = await gate.read_attachment(
                ref.uri, limit=CONTEXT_MAX_BYTES, image_limit=image_limit
            )
        except ToolError as exc:
            raise ContextRefused(f"`context` {_short(ref.uri)} refused: {exc}") from exc
        shown = display(uri_to_path(ref.uri)) if ref.uri.lower().startswith("file:") else ref.uri
        if isinstance(read, bytes):
            if ref.range is not None:
                raise ContextRefused(f"`context` {_short(ref.uri)} is an image: it has no range")
            try:
                found.images.append(image_part(read, shown))
            except ImageRefused as exc:
                raise ContextRefused(f"`context` {_short(ref.uri)} refused: {exc}") from exc
            continue
        text = read
        start = end = None
        if ref.range is not None:
            index = LineIndex(text, editor.position_encoding)
            start = index.offset(types.Position(**ref.range.start.model_dump()))
            end = index.offset(types.Position(**ref.range.end.model_dump()))
            if end < start:
                raise ContextRefused(
                    f"`context` {_short(ref.uri)}: the range ends before it starts"
                )
        problems = tuple(
            problem_line(d.range.start.line, d.message, d.severity, d.source, d.code)
            for d in ref.diagnostics
        )
        found.pieces.append(
            ContextPiece(path=shown, text=text, start=start, end=end, problems=problems)
        )
    return found


async def _resource(ref: ContextRef, resources: ResourceReader | None) -> ContextPiece:
    """The MCP resource ``ref`` names, read through its server."""
    name = f"`context` {_short(ref.uri)} of the MCP server {ref.server}"
    if resources is None:
        raise ContextRefused(f"{name}: MCP resources cannot be attached here")
    if ref.range is not None or ref.diagnostics:
        raise ContextRefused(f"{name}: a resource takes no range and no diagnostics")
    assert ref.server is not None
    try:
        text = await resources(ref.server, ref.uri)
    except McpError as exc:
        raise ContextRefused(f"{name} could not be read: {exc}") from exc
    if len(text.encode()) > CONTEXT_MAX_BYTES:
        raise ContextRefused(f"{name} is larger than {CONTEXT_MAX_BYTES} bytes")
    return ContextPiece(path=f"{ref.uri} (MCP server {ref.server})", text=text)


def _short(uri: str) -> str:
    return uri if len(uri) <= 200 else uri[:200] + "..."
