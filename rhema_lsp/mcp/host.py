"""Who a server's own requests go to: the run that uses it now.

A server may ask things of the client: its roots, a page opened (an OAuth
sign-in, a URL elicitation), a form filled, the model sampled. They reach
:class:`RunHost`, the latest run's editor, workspace folders and provider,
which the hub hands each connection (a server is shared by the runs).

An :class:`~rhema_lsp.tools.editor.Editor` may implement, beyond
``confirm``:

- :class:`DocumentOpener` (``show_document``: open a page in the user's
  browser, as LSP's ``window/showDocument`` with ``external``); an editor
  that cannot open pages still works: the page is logged and shown in the
  server's status instead;
- :class:`FormFiller` (``fill_form``: show a form, return what the user
  entered); without it a form is asked one question per field: a field with
  choices (a boolean, an enum) through ``confirm``, a free-text one through
  :class:`TextAsker` (``ask_text``, when ``asks_text``: LSP's ``rhema/askText``
  for a client that declared it); a required free-text field no prompt can
  take declines the form.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from rhema_lsp.engine.provider import ModelProvider
from rhema_lsp.tools.editor import Editor

__all__ = ["DocumentOpener", "FormFiller", "RunHost", "TextAsker", "opener", "text_asker"]

logger = logging.getLogger(__name__)


@runtime_checkable
class DocumentOpener(Protocol):
    """An editor that can open a page for the user."""

    async def show_document(self, uri: str) -> bool:
        """Open ``uri`` outside the editor (the browser); whether it was shown."""
        ...


@runtime_checkable
class FormFiller(Protocol):
    """An editor that can show a form (an MCP elicitation)."""

    async def fill_form(self, message: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
        """Ask the user to fill the flat JSON Schema ``schema``; the values,
        or ``None`` when declined."""
        ...


@runtime_checkable
class TextAsker(Protocol):
    """An editor that can ask the user for a line of text (an elicitation's
    free-text field)."""

    @property
    def asks_text(self) -> bool:
        """Whether this editor's client can take a line of text now."""
        ...

    async def ask_text(self, message: str, value: str) -> str | None:
        """Ask ``message``, ``value`` filled in; the answer, or ``None`` when
        the user dismissed the question."""
        ...


AskText = Callable[[str, str], Awaitable[str | None]]


def text_asker(editor: Editor) -> AskText | None:
    """How ``editor`` asks for a line of text, or ``None`` when it cannot."""
    if isinstance(editor, TextAsker) and editor.asks_text:
        return editor.ask_text
    return None


@dataclass(frozen=True, slots=True)
class RunHost:
    """The run a server's requests go to.

    Attributes
    ----------
    editor
        Asks the user (approvals, pages, forms).
    roots
        The workspace folders (a server's ``roots``).
    provider
        The session's model, for a server's sampling requests (``None``: refused).
    model
        The model's name, as the request names it.
    """

    editor: Editor
    roots: tuple[Path, ...]
    provider: ModelProvider | None = None
    model: str = ""


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
