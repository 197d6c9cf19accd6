"""The workspace folders this server serves, and what each one owns.

Every folder has its own session store, opened on first use, once, in the
door kit's registry (:class:`~rhema_lsp.runs.stores.StoreRegistry`, the one
the ACP agent keeps its stores in too). A command's ``folder``
is resolved here: the folder given (a path or a ``file://`` URI, which must
be one of the workspace folders), else the folder that holds the first
context URI, else the first folder.

A folder the client names that confines nothing (``/``, the home
directory or a folder above it, the system's own trees: the policy of
:mod:`rhema_lsp.tools.roots`) is not served, and the user is told why, once;
the folders are read (and checked) on every use, so a folder added later
(``workspace/didChangeWorkspaceFolders``) is checked too. So is a store's notice (a corrupt store
moved aside, a ``.rhema`` that cannot hold the store): it reaches the user
as a ``window/showMessage`` warning when the store opens.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from rhema_lsp.runs.stores import StoreRegistry
from rhema_lsp.sessions import SessionStore, StoreLocation, UnknownSessionError
from rhema_lsp.tools.confined_fs import ConfinedFS
from rhema_lsp.tools.gate import unsafe_root_reason
from rhema_lsp.tools.positions import uri_to_path

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = ["FolderError", "FolderState", "Folders"]


class FolderError(ValueError):
    """A folder argument names no workspace folder, or there is none."""


def _as_path(value: str) -> Path:
    if value.startswith("file:"):
        return uri_to_path(value)
    return Path(value).expanduser()


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


@dataclass
class FolderState:
    """What one workspace folder owns: its session store."""

    path: Path
    store: SessionStore


class Folders:
    """The workspace folders and their stores (kept in ``stores``, whose
    notices this class shows the user)."""

    def __init__(self, server: LanguageServer, stores: StoreRegistry | None = None) -> None:
        self._server = server
        self._stores = StoreRegistry() if stores is None else stores
        self._stores.on_notice = lambda _folder, notice: self._warn(notice)
        self._states: dict[tuple[Path, str], FolderState] = {}
        self._session_folders: dict[str, Path] = {}
        self._refused: set[Path] = set()

    def roots(self) -> list[Path]:
        """The workspace folders' real paths, in the client's order, but
        those that would confine nothing."""
        workspace = self._server.workspace
        roots = [_real(uri_to_path(folder.uri)) for folder in workspace.folders.values()]
        if not roots and workspace.root_path:
            roots = [_real(Path(workspace.root_path))]
        served = []
        for root in roots:
            reason = unsafe_root_reason(root)
            if reason is None:
                served.append(root)
            elif root not in self._refused:
                self._refused.add(root)
                self._warn(f"Rhema does not work in {root}: {reason}.")
        return served

    def _warn(self, message: str) -> None:
        self._server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )

    def resolve(self, folder: str | None, context_uris: list[str]) -> Path:
        """The folder a command runs in (see the module docstring).

        Raises
        ------
        FolderError
            ``folder`` is not a workspace folder, or the workspace has none.
        """
        roots = self.roots()
        if folder is not None:
            wanted = _real(_as_path(folder))
            if wanted in roots:
                return wanted
            raise FolderError(
                f"`folder` {folder} is not one of the workspace folders "
                f"({', '.join(map(str, roots)) or 'none open'})"
            )
        if not roots:
            if self._refused:
                refused = ", ".join(map(str, sorted(self._refused)))
                raise FolderError(
                    f"no workspace folder Rhema can work in: {refused} would confine nothing "
                    "(the file system's root, your home directory or a folder above it, or a "
                    "system folder); open a project folder"
                )
            raise FolderError(
                "no workspace folder is open: open a folder in the editor, or pass `folder`"
            )
        for uri in context_uris[:1]:
            holder = self.root_of(_as_path(uri))
            if holder is not None:
                return holder
        return roots[0]

    def root_of(self, path: Path) -> Path | None:
        """The innermost workspace folder holding ``path`` (symlinks resolved)."""
        return ConfinedFS(self.roots()).root_of(_real(path))

    def display(self, path: Path) -> str:
        """``path`` relative to the folder holding it, else as given."""
        real = _real(path)
        root = self.root_of(real)
        return str(path) if root is None else str(real.relative_to(root))

    async def state(self, folder: Path, location: StoreLocation) -> FolderState:
        """The folder's store, opened on first use (once: see the module docstring).

        Raises
        ------
        SessionStoreError
            It cannot be opened.
        """
        store = await self._stores.of(folder, location)
        key = (folder, location)
        state = self._states.get(key)
        if state is None or state.store is not store:
            state = self._states[key] = FolderState(path=folder, store=store)
        return state

    def remember(self, session: str, folder: Path) -> None:
        """Note which folder holds ``session``."""
        self._session_folders[session] = folder

    async def find(self, session: str, location: StoreLocation) -> FolderState:
        """The folder state whose store holds ``session``.

        Raises
        ------
        UnknownSessionError
            No workspace folder's store has it.
        """
        known = self._session_folders.get(session)
        candidates = [known] if known is not None else []
        candidates += [root for root in self.roots() if root != known]
        for folder in candidates:
            state = await self.state(folder, location)
            try:
                await state.store.info(session)
            except UnknownSessionError:
                continue
            self._session_folders[session] = folder
            return state
        folders = ", ".join(map(str, self.roots())) or "none open"
        raise UnknownSessionError(session, f"any workspace folder ({folders})")

    async def close(self) -> None:
        """Close every store (releasing their leases)."""
        self._states.clear()
        await self._stores.close()
