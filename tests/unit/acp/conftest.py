"""Fixtures of the in-process ACP wire tests: a workspace, a fake model, and
the real agent in-process (see line_harness)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rhema_lsp.runs.settings import Settings
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.acp.line_harness import InProcessAgent


@pytest.fixture
def model() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="openai", responder=lambda body: text_reply("Done.")) as server:
        yield server


def agent_settings(model: FakeModelServer) -> Settings:
    return Settings.model_validate(
        {
            "provider": "custom",
            "protocol": "openai",
            "baseUrl": model.base_url,
            "model": "fake-model",
        }
    )


@pytest.fixture
def acp(quiet_env: None, model: FakeModelServer) -> Iterator[InProcessAgent]:
    """An initialized agent."""
    agent = InProcessAgent(agent_settings(model))
    agent.initialize()
    yield agent
    agent.stop()
