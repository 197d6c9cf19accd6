"""A command's ``folder`` and ``context``, read into what the prompt carries.

:func:`read_context` turns the context references of ``rhema.turn``,
``rhema.step`` and ``rhema.edit`` into :class:`~rhema_lsp.runs.prompts.ContextPiece`\\ s
(the editor's text of an open document, else the file's; the range as
offsets; the diagnostics as problem lines); :func:`folder_for` decides the
folder a command runs in.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from rhema_lsp.contract import ContextRef
from rhema_lsp.runs.prompts import ContextPiece, problem_line, render_context
from rhema_lsp.server.folders import FolderError
from rhema_lsp.tools.positions import LineIndex, uri_to_path

if TYPE_CHECKING:
    from rhema_lsp.server.state import ServerState

__all__ = ["folder_for", "prompt_with_context", "read_context"]


def read_context(state: ServerState, refs: list[ContextRef]) -> list[ContextPiece]:
    """What each reference shows.

    Raises
    ------
    FolderError
        A referenced file cannot be read.
    """
    encoding = state.editor.position_encoding
    pieces = []
    for ref in refs:
        document = state.editor.open_document(ref.uri)
        path = uri_to_path(ref.uri)
        if document is not None:
            text = document.text
        else:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise FolderError(f"`context` {ref.uri} cannot be read: {exc}") from exc
        start = end = None
        if ref.range is not None:
            index = LineIndex(text, encoding)
            start = index.offset(types.Position(**ref.range.start.model_dump()))
            end = index.offset(types.Position(**ref.range.end.model_dump()))
        shown = state.folders.display(path)
        problems = tuple(
            problem_line(d.range.start.line, d.message, d.severity, d.source, d.code)
            for d in ref.diagnostics
        )
        pieces.append(ContextPiece(path=shown, text=text, start=start, end=end, problems=problems))
    return pieces


def prompt_with_context(state: ServerState, prompt: str, refs: list[ContextRef]) -> str:
    """``prompt`` followed by what ``refs`` show."""
    if not refs:
        return prompt
    return f"{prompt}\n\n{render_context(read_context(state, refs))}"


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
