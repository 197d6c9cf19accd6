"""``/status`` names the model the session's requests go to: the one the
model picker names (the provider's own when the settings name none)."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.runs.settings import Settings
from tests.acp.client import RecordingClient
from tests.fakes.model_server import FakeModelServer


async def _status(settings: Settings, folder: Path) -> str:
    client = RecordingClient()
    agent = RhemaAcpAgent(settings)
    agent.on_connect(client)
    try:
        await agent.initialize(protocol_version=1)
        session = (await agent.new_session(cwd=str(folder))).session_id
        await agent.prompt(prompt=[text_block("/status")], session_id=session)
    finally:
        await agent.shutdown()
    return client.message_text()


async def test_status_names_the_providers_own_model_when_none_is_set(
    fake: FakeModelServer, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-status-0000000000")
    monkeypatch.setenv("RHEMA_KEY_ORIGINS", fake.base_url.removesuffix("/v1"))
    settings = Settings.model_validate({"provider": "openai", "baseUrl": fake.base_url})
    status = await _status(settings, folder)
    assert "model gpt-4.1-mini," in status
    assert "provider default" not in status and fake.requests == []


async def test_status_says_when_no_provider_is_set_up(folder: Path) -> None:
    status = await _status(Settings.model_validate({"provider": "nonesuch"}), folder)
    assert "model none (no provider is set up)" in status
