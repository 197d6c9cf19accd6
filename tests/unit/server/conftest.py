"""Fixtures of the in-process wire tests: a workspace, a fake model that
answers anything, and the real server in-process (see wire_harness)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.server.loopback import Loopback, kept_logging, settings, start, stop
from tests.unit.server.wire_harness import InProcessServer


@pytest.fixture(autouse=True)
def _logging_put_back() -> Iterator[None]:
    """A server built in-process routes the ``rhema_lsp`` loggers to its
    client (no propagation): every test here gets them back as they were, so
    a later test's ``caplog`` still sees the records."""
    with kept_logging():
        yield


@pytest.fixture(scope="module")
def model() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="openai", responder=lambda body: text_reply("Done.")) as server:
        yield server


def settings_for(model: FakeModelServer, **extra: Any) -> dict[str, Any]:
    """The settings of a client of ``model``, logging at info (the level at
    which the server logs a client's mistakes), declaring events."""
    return {
        "provider": "custom",
        "protocol": "openai",
        "baseUrl": model.base_url,
        "model": "fake-model",
        "logLevel": "info",
        "clientCapabilities": {"events": True},
        **extra,
    }


@pytest.fixture
def bare(quiet_env: None) -> Iterator[InProcessServer]:
    """A server nobody has initialized yet."""
    server = InProcessServer()
    yield server
    server.stop()


@pytest.fixture
def lsp(bare: InProcessServer, model: FakeModelServer, workspace: Path) -> InProcessServer:
    """An initialized server on ``workspace``."""
    bare.initialize(settings_for(model), [workspace])
    return bare


@pytest.fixture
async def client(folder: Path, fake: FakeModelServer) -> AsyncIterator[Loopback]:
    """The real server in process on a loopback transport, serving ``folder``."""
    with kept_logging():
        started = await start(folder, settings(fake))
        try:
            yield started
        finally:
            await stop(started)
