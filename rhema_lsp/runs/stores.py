"""The session store of each folder a door serves, opened once.

:class:`StoreRegistry` is the one registry both front doors keep their
stores in (the language server's workspace folders, the ACP agent's
``cwd``\\ s). Its rules: a folder's store (per store location) is opened at
most once, under a lock of its own, so commands arriving together (a chat
view listing sessions while a turn starts, four ``session/new`` on one
folder) share one store, never open a second one (SQLite would refuse its
switch to WAL with "database is locked"); a store's notice (a corrupt store
moved aside, a ``.rhema`` that cannot hold one) is handed to the door's
``on_notice`` once, as the store opens; :meth:`StoreRegistry.close` closes
every store once (releasing their leases).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import anyio

from rhema_lsp.sessions import SessionStore, StoreLocation

__all__ = ["Notice", "StoreRegistry"]

logger = logging.getLogger(__name__)

Notice = Callable[[Path, str], None]
"""Told a store's notice as it opens: the folder, the notice."""


class StoreRegistry:
    """The stores of one door, by folder and location (see the module docstring)."""

    def __init__(self, on_notice: Notice | None = None) -> None:
        self.on_notice = on_notice
        self._stores: dict[tuple[Path, StoreLocation], SessionStore] = {}
        self._opening: dict[tuple[Path, StoreLocation], anyio.Lock] = {}

    def opened(self) -> list[SessionStore]:
        """Every store opened so far (and not closed)."""
        return list(self._stores.values())

    def get(self, folder: Path, location: StoreLocation) -> SessionStore | None:
        """``folder``'s store if it is open."""
        return self._stores.get((folder, location))

    async def of(self, folder: Path, location: StoreLocation) -> SessionStore:
        """``folder``'s store, opened on first use (once, however many ask together).

        Raises
        ------
        SessionStoreError
            It cannot be opened.
        """
        key = (folder, location)
        store = self._stores.get(key)
        if store is not None:
            return store
        async with self._opening.setdefault(key, anyio.Lock()):
            store = self._stores.get(key)
            if store is None:
                store = await SessionStore.open(folder, location=location)
                self._stores[key] = store
                if store.notice:
                    logger.warning("%s", store.notice)
                    if self.on_notice is not None:
                        self.on_notice(folder, store.notice)
        return store

    async def close(self) -> None:
        """Close every store (releasing their leases); later uses open them again."""
        stores = self.opened()
        self._stores.clear()
        for store in stores:
            await store.close()
