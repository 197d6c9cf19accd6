"""Who answers a question about trusting the workspace's own files, headless:
``--trust-project`` only. ``--yes`` approves questions about actions and
answers a trust question ``Not now``; with no terminal it is ``Not now``
too; at a terminal without either flag the user is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from rhema_lsp.headless import editor as headless_editor
from rhema_lsp.headless.editor import HeadlessEditor
from rhema_lsp.vocabulary import TRUST_CHOICES

TRUST = {
    "message": "x/.mcp.json offers MCP servers",
    "actions": [{"title": t} for t in TRUST_CHOICES],
}
ACTION = {"message": "Run `make`?", "actions": [{"title": "Deny"}, {"title": "Allow"}]}


def editor(tmp_path: Path, *, yes: bool, trust: bool, interactive: bool = False) -> HeadlessEditor:
    return HeadlessEditor(
        tmp_path,
        {},
        lambda _: None,
        approve_all=yes,
        interactive=interactive,
        color=False,
        trust_project=trust,
    )


@pytest.mark.parametrize(
    ("yes", "trust", "answer"),
    [
        (True, False, "Not now"),
        (False, False, "Not now"),
        (False, True, "Use them this time"),
        (True, True, "Use them this time"),
    ],
)
async def test_only_trust_project_trusts_the_workspace_files(
    tmp_path: Path, yes: bool, trust: bool, answer: str
) -> None:
    assert await editor(tmp_path, yes=yes, trust=trust).show_message_request(TRUST) == {
        "title": answer
    }


async def test_yes_still_approves_actions_and_trust_project_does_not(tmp_path: Path) -> None:
    assert await editor(tmp_path, yes=True, trust=False).show_message_request(ACTION) == {
        "title": "Allow"
    }
    assert await editor(tmp_path, yes=False, trust=True).show_message_request(ACTION) is None


async def test_at_a_terminal_without_either_flag_the_user_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []

    async def terminal(actions: list[str]) -> str | None:
        asked.append(actions)
        return "Never"

    monkeypatch.setattr(headless_editor, "_in_daemon_thread", terminal)
    answered = await editor(
        tmp_path, yes=False, trust=False, interactive=True
    ).show_message_request(TRUST)
    assert answered == {"title": "Never"}
    assert asked == [list(TRUST_CHOICES)]
    asked.clear()
    yes = await editor(tmp_path, yes=True, trust=False, interactive=True).show_message_request(
        TRUST
    )
    assert yes == {"title": "Not now"}
    assert asked == []
