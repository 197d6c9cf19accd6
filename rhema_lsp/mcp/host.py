"""What MCP servers may ask of the user, beyond the ``Editor``'s ``confirm``.

An :class:`~rhema_lsp.tools.editor.Editor` may also implement
:class:`DocumentOpener` (``show_document``: open a page in the user's
browser, as LSP's ``window/showDocument`` with ``external``); the OAuth
sign-in and URL elicitations use it. An editor that cannot open pages still
works: the page is logged and shown in the server's status instead.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

from rhema_lsp.tools.editor import Editor

__all__ = ["DocumentOpener", "opener"]

logger = logging.getLogger(__name__)


@runtime_checkable
class DocumentOpener(Protocol):
    """An editor that can open a page for the user."""

    async def show_document(self, uri: str) -> bool:
        """Open ``uri`` outside the editor (the browser); whether it was shown."""
        ...


def opener(editor: Editor) -> Callable[[str], Awaitable[bool]]:
    """A function that opens a page through ``editor``, or says it cannot."""

    async def open_page(uri: str) -> bool:
        if not isinstance(editor, DocumentOpener):
            return False
        try:
            return await editor.show_document(uri)
        except Exception as exc:  # noqa: BLE001 - the page is also logged and in the status
            logger.warning("the editor did not open %s: %s", uri, exc)
            return False

    return open_page
