"""MCP forms and page visits through ACP's ``elicitation/create``, for a
client that declared ``elicitation`` in ``initialize``.

An MCP server's form (``elicitation/create`` in form mode) and its pages (URL
mode, and the pages a ``-32042`` error names: a sign-in) reach the session's
editor (:mod:`rhema_lsp.mcp.asks`, :mod:`rhema_lsp.mcp.pages`). The ACP
editor of a client that declared:

- ``elicitation.form``: is a :class:`~rhema_lsp.mcp.host.FormFiller`: the
  form goes to the client as ACP's form elicitation, scoped to the session
  and the tool call in flight, its schema as the server gave it (a schema
  ACP's cannot carry is declined, the log says why); the client's form is
  the review: the user sees every value when submitting it;
- ``elicitation.url``: is a :class:`~rhema_lsp.mcp.pages.PageOfferer`: the
  page goes as ACP's URL elicitation (the MCP elicitation id kept, else a
  new one), the client opens it; and a :class:`~rhema_lsp.mcp.pages.PageCloser`:
  the server's ``notifications/elicitation/complete`` for a page it sent
  goes on to the client as ACP's ``elicitation/complete`` notification, so
  the client can close its prompt (only for ids this editor sent; a failed
  notification is logged).

A client that declared neither keeps the older way: each field asked with
``session/request_permission``, the page named in a permission question and
in the log. A failed or refused request declines (forms) or cancels (pages).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from acp.schema import (
    AcceptElicitationResponse,
    CancelElicitationResponse,
    ClientCapabilities,
    DeclineElicitationResponse,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationUrlSessionMode,
)
from pydantic import AnyUrl, ValidationError

from rhema_lsp.acp.editor import CLIENT_FAILED, AcpEditor

__all__ = ["FormEditor", "PageEditor", "editor_class"]

logger = logging.getLogger(__name__)

Answer = AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse


class Eliciting(Protocol):
    """The SDK client connection's ``elicitation/create`` and ``elicitation/complete``."""

    async def create_elicitation(
        self, message: str, mode: ElicitationFormSessionMode | ElicitationUrlSessionMode
    ) -> Answer:
        """``elicitation/create``."""
        ...

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """``elicitation/complete``."""
        ...


class PageEditor(AcpEditor):
    """The ACP editor of a client that takes URL elicitations."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._offered: set[str] = set()

    def offers_pages(self) -> bool:
        """Always: the client declared ``elicitation.url``."""
        return True

    async def page_completed(self, elicitation_id: str) -> None:
        """Pass the server's completion of a page this editor sent to the client."""
        if elicitation_id not in self._offered:
            return
        self._offered.discard(elicitation_id)
        client: Eliciting = self.client  # type: ignore[assignment]  # the SDK's connection has it
        try:
            await client.complete_elicitation(elicitation_id=elicitation_id)
        except CLIENT_FAILED as exc:
            logger.warning("the client's elicitation/complete failed: %s", exc)

    async def offer_page(
        self, server: str, url: str, message: str, elicitation_id: str | None
    ) -> Literal["accept", "decline", "cancel"]:
        """Send the page as ACP's URL elicitation; the user's action."""
        try:
            mode = ElicitationUrlSessionMode(
                session_id=self.session_id,
                tool_call_id=self.call_id,
                elicitation_id=elicitation_id or uuid.uuid4().hex,
                url=AnyUrl(url),
            )
        except ValidationError as exc:
            logger.warning("MCP server %s: the page %r is not a URL: %s", server, url, exc)
            return "cancel"
        if elicitation_id is not None:
            self._offered.add(elicitation_id)
        answer = await self._elicit(
            f"The MCP server {server} asks you to open a page: {message}", mode
        )
        return answer.action if answer is not None else "cancel"

    async def _elicit(
        self, message: str, mode: ElicitationFormSessionMode | ElicitationUrlSessionMode
    ) -> Answer | None:
        client: Eliciting = self.client  # type: ignore[assignment]  # the SDK's connection has it
        try:
            return await client.create_elicitation(message, mode)
        except CLIENT_FAILED as exc:
            logger.warning("the client's elicitation failed (%s); declined", exc)
            return None


class FormEditor(PageEditor):
    """The ACP editor of a client that takes form elicitations (and perhaps
    URL ones: :attr:`pages`)."""

    pages = False

    def offers_pages(self) -> bool:
        """Whether the client also declared ``elicitation.url``."""
        return self.pages

    async def fill_form(self, message: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
        """Send the form as ACP's form elicitation; the values, or ``None``."""
        try:
            requested = ElicitationSchema.model_validate(dict(schema))
        except ValidationError as exc:
            logger.warning("an MCP form ACP cannot carry was declined: %s", exc)
            return None
        mode = ElicitationFormSessionMode(
            session_id=self.session_id, tool_call_id=self.call_id, requested_schema=requested
        )
        answer = await self._elicit(message, mode)
        if isinstance(answer, AcceptElicitationResponse):
            return dict(answer.content or {})
        return None


class _FormAndPageEditor(FormEditor):
    pages = True


def editor_class(capabilities: ClientCapabilities) -> type[AcpEditor]:
    """The editor a session of a client with ``capabilities`` gets."""
    declared = capabilities.elicitation
    form = declared is not None and declared.form is not None
    url = declared is not None and declared.url is not None
    if form:
        return _FormAndPageEditor if url else FormEditor
    return PageEditor if url else AcpEditor
