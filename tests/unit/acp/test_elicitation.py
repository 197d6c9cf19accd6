"""Which ACP editor a client's declared ``elicitation`` gets, a form ACP
cannot carry declined without a request, and an MCP server's completion of a
page passed on as ACP's ``elicitation/complete`` (only for pages the client
was sent; a failing client only logged) (in process, a recording client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types
import pytest
from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
)

from rhema_lsp.acp.editor import AcpEditor
from rhema_lsp.acp.elicitation import FormEditor, PageEditor, editor_class
from rhema_lsp.mcp.host import FormFiller, RunHost
from rhema_lsp.mcp.pages import Completions, PageCloser, PageOfferer


class Recording:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.completed: list[str] = []
        self.failing = False

    async def create_elicitation(self, message: str, mode: Any) -> AcceptElicitationResponse:
        self.sent.append((message, mode))
        return AcceptElicitationResponse(action="accept", content={"size": "large"})

    async def complete_elicitation(self, elicitation_id: str) -> None:
        if self.failing:
            raise RequestError(-32601, "method not found")
        self.completed.append(elicitation_id)


def declared(form: bool, url: bool) -> ClientCapabilities:
    return ClientCapabilities(
        elicitation=ElicitationCapabilities(
            form=ElicitationFormCapabilities() if form else None,
            url=ElicitationUrlCapabilities() if url else None,
        )
    )


def editor(kind: type[AcpEditor], client: Recording, tmp_path: Path) -> AcpEditor:
    return kind(client, "s1", [tmp_path], read_through=False, write_through=False)  # type: ignore[arg-type]


def test_the_editor_follows_what_the_client_declared(tmp_path: Path) -> None:
    client = Recording()
    plain = editor(editor_class(ClientCapabilities()), client, tmp_path)
    assert not isinstance(plain, FormFiller) and not isinstance(plain, PageOfferer)
    pages = editor(editor_class(declared(False, True)), client, tmp_path)
    assert isinstance(pages, PageOfferer) and not isinstance(pages, FormFiller)
    forms = editor(editor_class(declared(True, False)), client, tmp_path)
    assert isinstance(forms, FormFiller) and isinstance(forms, PageOfferer)
    assert not forms.offers_pages()
    both = editor(editor_class(declared(True, True)), client, tmp_path)
    assert isinstance(both, FormEditor) and both.offers_pages()
    assert isinstance(both, PageEditor)


async def test_a_form_acp_cannot_carry_is_declined_without_a_request(tmp_path: Path) -> None:
    client = Recording()
    forms = editor(editor_class(declared(True, False)), client, tmp_path)
    assert isinstance(forms, FormEditor)
    bad = {"type": "object", "properties": {"size": 3}}
    assert await forms.fill_form("s: pick", bad) is None and client.sent == []
    good = {"type": "object", "properties": {"size": {"type": "string", "enum": ["large"]}}}
    assert await forms.fill_form("s: pick", good) == {"size": "large"}
    [(message, mode)] = client.sent
    assert message == "s: pick" and mode.session_id == "s1"


async def test_a_page_that_is_not_a_url_is_cancelled_without_a_request(tmp_path: Path) -> None:
    client = Recording()
    pages = editor(editor_class(declared(False, True)), client, tmp_path)
    assert isinstance(pages, PageEditor)
    assert await pages.offer_page("s", "not a url", "sign in", None) == "cancel"
    assert client.sent == []


def complete(elicitation_id: str) -> mcp_types.ElicitCompleteNotification:
    return mcp_types.ElicitCompleteNotification(
        params=mcp_types.ElicitCompleteNotificationParams(elicitation_id=elicitation_id)
    )


async def test_a_servers_completion_of_a_page_sent_reaches_the_client_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    client = Recording()
    pages = editor(editor_class(declared(False, True)), client, tmp_path)
    assert isinstance(pages, PageEditor) and isinstance(pages, PageCloser)
    host, completions = RunHost(pages, (tmp_path,)), Completions()
    assert await pages.offer_page("s", "https://x.example/in", "sign in", "e1") == "accept"
    assert await pages.offer_page("s", "https://x.example/new", "sign in", None) == "accept"
    assert not await completions.hear("not a notification", host)
    for heard in ("other", "e1", "e1"):  # not sent, sent, already passed on
        assert await completions.hear(complete(heard), host)
    assert client.completed == ["e1"]
    assert await completions.wait("e1", 0.05)  # the waiting call hears it too
    client.failing = True
    assert await pages.offer_page("s", "https://x.example/in", "sign in", "e2") == "accept"
    assert await completions.hear(complete("e2"), host)
    assert client.completed == ["e1"] and "elicitation/complete failed" in caplog.text
