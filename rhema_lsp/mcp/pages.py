"""URL elicitations: a server's page offered to the user, and its completion awaited.

A server asks the user to visit a page in two ways: the ``elicitation/create``
request in URL mode (answered by :mod:`rhema_lsp.mcp.asks`), and the error
``-32042`` "URL elicitation required" to a request, naming one or more
pages the user must visit before the request can succeed. Both offer the page
through :func:`offer_page`:

- an editor that can ask it as an elicitation (a
  :class:`PageOfferer`: the ACP client that declared ``elicitation``) is
  asked that way, the server's message and URL as they are;
- otherwise the user chooses ``Open`` (or ``Deny``) through ``confirm``, and
  the page is opened with the editor's ``window/showDocument``; an editor
  that cannot open it shows the URL in a message (:class:`Notifier`) and the
  log names it. Headless, the terminal prints it.

Only a web page (``http``/``https``) is offered; any other URL a server
names (``file:``, ``javascript:``) is declined and logged.

After ``-32042``, :func:`visit_required` waits for the server's
``notifications/elicitation/complete`` of every page (each at most
:data:`URL_WAIT_S`, as :class:`Completions` hears them); the request is then
sent once more (:mod:`rhema_lsp.mcp.calls`), never twice more. A page the
user refused, or a completion that did not come in time, ends the request
with a message naming the page. A completion the server sends for a page
an editor offered as an elicitation of its own (a :class:`PageCloser`: the
ACP client) is passed on to it (:meth:`Completions.hear`), so the client can
close its page prompt. Nothing here raises but
:class:`~rhema_lsp.mcp.errors.McpCallFailed`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Literal, Protocol, runtime_checkable

import anyio
import mcp_types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from rhema_lsp.mcp.errors import McpCallFailed
from rhema_lsp.mcp.host import RunHost, opener
from rhema_lsp.tools.editor import DENY

__all__ = [
    "OPEN",
    "URL_WAIT_S",
    "Completions",
    "Notifier",
    "PageCloser",
    "PageOfferer",
    "offer_page",
    "required_pages",
    "visit_required",
]

logger = logging.getLogger(__name__)

OPEN = "Open"
URL_WAIT_S = 300.0
"""How long a request waits for the server to say a page was visited."""

Action = Literal["accept", "decline", "cancel"]


@runtime_checkable
class PageOfferer(Protocol):
    """An editor that asks for a page visit as an elicitation of its own
    (ACP's ``elicitation/create`` in URL mode)."""

    def offers_pages(self) -> bool:
        """Whether its client takes URL elicitations now."""
        ...

    async def offer_page(
        self, server: str, url: str, message: str, elicitation_id: str | None
    ) -> Action:
        """Ask the user to visit ``url``; the user's action."""
        ...


@runtime_checkable
class PageCloser(Protocol):
    """An editor told when a page it offered as an elicitation was completed
    (ACP's ``elicitation/complete``)."""

    async def page_completed(self, elicitation_id: str) -> None:
        """The server says the page of ``elicitation_id`` was visited."""
        ...


@runtime_checkable
class Notifier(Protocol):
    """An editor that can show the user a line of text (LSP's ``window/showMessage``)."""

    def notify(self, message: str) -> None:
        """Show ``message``."""
        ...


class Completions:
    """The ``notifications/elicitation/complete`` a server sent, by
    elicitation id (one per connection; the message handler feeds it)."""

    def __init__(self) -> None:
        self._events: dict[str, anyio.Event] = {}

    def _event(self, elicitation_id: str) -> anyio.Event:
        return self._events.setdefault(elicitation_id, anyio.Event())

    def heard(self, message: object) -> bool:
        """Note ``message`` if it is a completion; whether it was one."""
        if not isinstance(message, mcp_types.ElicitCompleteNotification):
            return False
        self._event(message.params.elicitation_id).set()
        return True

    async def hear(self, message: object, host: RunHost | None) -> bool:
        """:meth:`heard`, the completion passed on to ``host``'s editor when
        it is a :class:`PageCloser`."""
        if not isinstance(message, mcp_types.ElicitCompleteNotification):
            return False
        editor = host.editor if host is not None else None
        if isinstance(editor, PageCloser):  # before the waiting request goes on
            await editor.page_completed(message.params.elicitation_id)
        return self.heard(message)

    async def wait(self, elicitation_id: str, timeout_s: float) -> bool:
        """Whether the server said ``elicitation_id`` completed within ``timeout_s``."""
        with anyio.move_on_after(timeout_s):
            await self._event(elicitation_id).wait()
            self._events.pop(elicitation_id, None)
            return True
        return False


async def offer_page(
    server: str, host: RunHost | None, url: str, message: str, elicitation_id: str | None = None
) -> Action:
    """Offer ``url`` to the user (see the module docstring); the user's action."""
    if host is None:
        logger.warning("MCP server %s asks you to open %s: %s", server, url, message)
        return "cancel"
    if not url.lower().startswith(("https://", "http://")):
        logger.warning("MCP server %s asked to open %r, not a web page: refused", server, url[:200])
        return "decline"
    editor = host.editor
    if isinstance(editor, PageOfferer) and editor.offers_pages():
        return await editor.offer_page(server, url, message, elicitation_id)
    answer = await editor.confirm(
        f"The MCP server {server} asks you to open {url}: {message}", [DENY, OPEN]
    )
    if answer != OPEN:
        return "decline" if answer == DENY else "cancel"
    if not await opener(editor)(url):
        if isinstance(editor, Notifier):
            editor.notify(f"Open this page for the MCP server {server}: {url}")
        logger.warning("MCP server %s: open %s yourself: %s", server, url, message)
    return "accept"


def required_pages(error: MCPError) -> list[mcp_types.ElicitRequestURLParams]:
    """The pages a ``-32042`` error names (none when its data is not the spec's)."""
    data = error.data if isinstance(error.data, dict) else {}
    raw = data.get("elicitations")
    pages = []
    for item in raw if isinstance(raw, list) else []:
        try:
            pages.append(mcp_types.ElicitRequestURLParams.model_validate(item))
        except ValidationError:
            continue
    return pages


async def visit_required(
    server: str,
    host: RunHost | None,
    pages: Iterable[mcp_types.ElicitRequestURLParams],
    completions: Completions,
    wait_s: float | None = None,
) -> None:
    """Offer every page of a ``-32042`` error and wait for each to complete.

    Raises
    ------
    McpCallFailed
        No page named, a page refused, or not completed within ``wait_s``
        (default :data:`URL_WAIT_S`).
    """
    wait_s = URL_WAIT_S if wait_s is None else wait_s
    listed = list(pages)
    if not listed:
        raise McpCallFailed(
            f"the MCP server {server} wants a page visited first but named none (-32042)"
        )
    for page in listed:
        action = await offer_page(server, host, page.url, page.message, page.elicitation_id)
        if action != "accept":
            raise McpCallFailed(
                f"the MCP server {server} needs {page.url} visited first ({page.message}); "
                f"the page was not opened ({action})"
            )
        if page.elicitation_id is None:
            continue  # nothing to hear of: the request is sent again at once
        logger.info("MCP server %s: waiting for %s to be completed", server, page.url)
        if not await completions.wait(page.elicitation_id, wait_s):
            raise McpCallFailed(
                f"the MCP server {server} did not hear within {wait_s:g} s that {page.url} "
                f"was visited ({page.message}); try again once you finished there"
            )
