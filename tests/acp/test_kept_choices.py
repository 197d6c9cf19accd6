"""A session's mode, model and thinking level are kept with it in its store:
switched over ACP (``session/set_config_option``), then reopened through
either door, the session goes on with them. Over ACP (``session/load`` and
``session/resume``) the options answered are the kept ones and the next
request carries them; over LSP (``rhema.turn`` on that session, no ``mode``
given) the editor's turn does too. The fake model server records each
request: its model, its reasoning effort, the tools the mode offers."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import SessionConfigOptionSelect

from tests.acp.client import RecordingClient, start_agent
from tests.acp.test_both_doors import lsp_settings
from tests.e2e.editor_client import start_editor
from tests.fakes.model_server import FakeModelServer, text_reply


@pytest.fixture
def models() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="openai", models=["fake-model", "fake-large"]) as server:
        yield server


def _current(options: Sequence[object] | None) -> dict[str, str]:
    found = {}
    for option in options or []:
        assert isinstance(option, SessionConfigOptionSelect)
        found[option.id] = option.current_value
    return found


def _seen(request: dict[str, Any]) -> tuple[str, str | None, bool]:
    """The request's model, reasoning effort, and whether it may edit."""
    tools = {tool["function"]["name"] for tool in request.get("tools", [])}
    return request["model"], request.get("reasoning_effort"), "edit_file" in tools


async def _chosen_session(models: FakeModelServer, state: Path, workspace: Path) -> str:
    """A session switched to ask mode, fake-large, high thinking (two of the
    choices before its first prompt, one after), with one turn."""
    async with start_agent(RecordingClient(), models, state, "--mode", "edit") as (conn, _):
        sid = (await conn.new_session(cwd=str(workspace))).session_id
        await conn.set_config_option(config_id="model", session_id=sid, value="fake-large")
        await conn.set_session_mode(mode_id="ask", session_id=sid)
        await conn.prompt(session_id=sid, prompt=[text_block("one")])
        await conn.set_config_option(config_id="thinking", session_id=sid, value="high")
    return sid


async def test_acp_load_and_resume_go_on_with_the_kept_choices(
    models: FakeModelServer, state: Path, workspace: Path
) -> None:
    models.script(text_reply("One."), text_reply("Two."), text_reply("Three."))
    sid = await _chosen_session(models, state, workspace)
    kept = {"mode": "ask", "model": "fake-large", "thinking": "high"}
    async with start_agent(RecordingClient(), models, state, "--mode", "edit") as (conn, _):
        loaded = await conn.load_session(cwd=str(workspace), session_id=sid)
        assert loaded.modes is not None and loaded.modes.current_mode_id == "ask"
        assert _current(loaded.config_options) == kept
        await conn.prompt(session_id=sid, prompt=[text_block("two")])
    async with start_agent(RecordingClient(), models, state, "--mode", "edit") as (conn, _):
        resumed = await conn.resume_session(cwd=str(workspace), session_id=sid)
        assert _current(resumed.config_options) == kept
        await conn.prompt(session_id=sid, prompt=[text_block("three")])
    first, second, third = (_seen(r) for r in models.requests)
    assert first == ("fake-large", None, False)  # thinking was switched after it
    assert second == third == ("fake-large", "high", False)


async def test_an_lsp_turn_goes_on_with_the_choices_made_over_acp(
    models: FakeModelServer, state: Path, workspace: Path
) -> None:
    models.script(text_reply("One."), text_reply("Two."), text_reply("Three."))
    sid = await _chosen_session(models, state, workspace)
    editor = await start_editor(
        "visual_studio_code",
        [workspace],
        lsp_settings(models),  # model fake-model, mode edit
        env={"XDG_STATE_HOME": str(state), "OPENAI_API_KEY": ""},
    )
    try:
        kept = await editor.command("rhema.turn", {"prompt": "two", "session": sid})
        fresh = await editor.command("rhema.turn", {"prompt": "new"})
    finally:
        await editor.shutdown_session()
    assert (kept["session"], kept["stopReason"]) == (sid, "end_turn")
    assert fresh["session"] != sid
    _, on_kept, on_fresh = (_seen(r) for r in models.requests)
    assert on_kept == ("fake-large", "high", False)
    assert on_fresh == ("fake-model", None, True)  # a new session: the settings
