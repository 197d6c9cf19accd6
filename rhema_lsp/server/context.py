"""A command's ``folder`` and ``context``, read into what the prompt carries.

:func:`read_context` reads the context references of ``rhema.turn``,
``rhema.step`` and ``rhema.edit`` through the workspace's gate
(:func:`rhema_lsp.runs.context.read_context`: confined, protected files
asked for, regular files only, capped); a refused one refuses the command
(:class:`~rhema_lsp.server.errors.BadArguments`). :func:`folder_for`
decides the folder a command runs in. :func:`prompt_and_images` is what
``rhema.turn`` and ``rhema.step`` carry: the text, and the images of
``context`` and ``images``. An MCP resource in ``context`` (a ref with
``server``) is read through the hub, as the ``read_mcp_resource`` tool reads it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from rhema_lsp.contract import ContextRef, ImageArg
from rhema_lsp.engine import ImagePart, ImageRefused, image_from_base64
from rhema_lsp.runs import context
from rhema_lsp.runs.prompts import ContextPiece, render_context
from rhema_lsp.server.errors import BadArguments
from rhema_lsp.server.folders import FolderError

if TYPE_CHECKING:
    from rhema_lsp.server.state import ServerState

__all__ = ["folder_for", "prompt_and_images", "read_context"]

_Read = TypeVar("_Read")

_Reader = Callable[..., Awaitable[_Read]]
"""One of :mod:`rhema_lsp.runs.context`'s readers (text only, or with images)."""


async def _read_with(
    state: ServerState, refs: list[ContextRef], folder: Path, reader: _Reader[_Read]
) -> _Read:
    """``refs`` read by ``reader`` from this server's folders, editor and MCP
    servers; a refused one is :class:`BadArguments`."""
    folders = state.folders
    try:
        return await reader(
            refs,
            folders.roots() or [folder],
            folder,
            state.editor,
            folders.display,
            state.mcp.read_resource,
        )
    except context.ContextRefused as exc:
        raise BadArguments(str(exc)) from exc


async def read_context(
    state: ServerState, refs: list[ContextRef], folder: Path
) -> list[ContextPiece]:
    """The attached documents, read through the workspace's gate.

    Raises
    ------
    BadArguments
        A document is refused or cannot be read.
    """
    return await _read_with(state, refs, folder, context.read_context)


async def prompt_and_images(
    state: ServerState,
    prompt: str,
    refs: list[ContextRef],
    images: list[ImageArg],
    folder: Path,
) -> tuple[str, tuple[ImagePart, ...]]:
    """``prompt`` followed by the text ``refs`` show, and the images attached:
    those of ``refs`` (files whose bytes are images), then ``images``.

    Raises
    ------
    BadArguments
        A document is refused or cannot be read; an image is not valid
        base64, not an image, or too large.
    """
    attached = await _read_with(state, refs, folder, context.read_attachments)
    found = list(attached.images)
    for number, arg in enumerate(images, start=1):
        name = arg.name or f"image {number}"
        try:
            found.append(image_from_base64(arg.data, name))
        except ImageRefused as exc:
            raise BadArguments(f"`images` {name} refused: {exc}") from exc
    text = f"{prompt}\n\n{render_context(attached.pieces)}" if attached.pieces else prompt
    return text, tuple(found)


async def folder_for(
    state: ServerState, folder: str | None, refs: list[ContextRef], session: str | None
) -> Path:
    """The folder of ``session`` when one is named, else as ``folder`` and
    the context say.

    Raises
    ------
    FolderError
        ``folder`` is no workspace folder, or not ``session``'s.
    """
    folders = state.folders
    if session is None:
        return folders.resolve(folder, [ref.uri for ref in refs])
    found = await state.state_of(session)
    if folder is not None and folders.resolve(folder, []) != found.path:
        raise FolderError(f"`folder` {folder} is not the folder of session {session}")
    return found.path
