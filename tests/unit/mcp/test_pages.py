"""Hostile and odd input to the page and review steps, in process: a
``-32042`` whose data is not the spec's, a URL that is not a web page, a
completion for another page, a form answer too long or secret to echo."""

from __future__ import annotations

from pathlib import Path

import mcp_types
import pytest
from mcp.shared.exceptions import MCPError

from rhema_lsp.mcp.errors import McpCallFailed
from rhema_lsp.mcp.host import RunHost
from rhema_lsp.mcp.pages import Completions, offer_page, required_pages, visit_required
from rhema_lsp.mcp.review import summary
from rhema_lsp.tools import MemoryEditor


@pytest.mark.parametrize(
    "data",
    [None, "garbage", {"elicitations": "no"}, {"elicitations": [{"mode": "form"}, 3, None]}],
)
async def test_a_32042_naming_no_page_fails_the_call_without_asking(
    tmp_path: Path, data: object
) -> None:
    error = MCPError(mcp_types.URL_ELICITATION_REQUIRED, "visit", data)
    editor = MemoryEditor([tmp_path], answer="Open")
    assert required_pages(error) == []
    with pytest.raises(McpCallFailed, match="named none"):
        await visit_required(
            "s", RunHost(editor, (tmp_path,)), required_pages(error), Completions()
        )
    assert editor.asked == []


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "javascript:alert(1)", "vscode://x", "  https://x"]
)
async def test_only_a_web_page_is_offered(tmp_path: Path, url: str) -> None:
    editor = MemoryEditor([tmp_path], answer="Open")
    assert await offer_page("s", RunHost(editor, (tmp_path,)), url, "sign in") == "decline"
    assert editor.asked == [] and editor.shown == []


async def test_a_completion_for_another_page_does_not_end_the_wait() -> None:
    completions = Completions()
    other = mcp_types.ElicitCompleteNotification(
        params=mcp_types.ElicitCompleteNotificationParams(elicitation_id="other")
    )
    assert completions.heard(other) and not completions.heard("not a notification")
    assert await completions.wait("mine", 0.05) is False
    assert await completions.wait("other", 0.05) is True


def test_the_review_shortens_long_values_and_masks_secrets() -> None:
    schema = {
        "properties": {
            "note": {"type": "string", "title": "Note"},
            "pin": {"type": "string", "format": "password"},
            "api_token": {"type": "string"},
            "tags": {"type": "array"},
            "left": {"type": "string", "title": "Left"},
        }
    }
    shown = summary(
        schema, {"note": "x" * 500, "pin": "1234", "api_token": "sk-abcdef", "tags": ["a", "b"]}
    )
    assert shown == (
        f"Note: {'x' * 79}…; pin: ••••; api_token: ••••••••; tags: a, b; Left: (left out)"
    )
    assert "1234" not in shown and "sk-abc" not in shown
    assert summary({"properties": "bad"}, {}) == "(no fields)"
