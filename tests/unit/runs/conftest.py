"""Fixtures of the pipeline's in-process tests: a workspace with one file,
its store, the in-memory editor over it, the fake model server, and the
pipeline (see :mod:`tests.unit.runs.harness`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rhema_lsp.runs.settings import Settings
from rhema_lsp.sessions import SessionStore
from rhema_lsp.tools import MemoryEditor
from tests.fakes.model_server import FakeModelServer
from tests.unit.runs.harness import Bench, make_turns


@pytest.fixture
async def bench(folder: Path, fake: FakeModelServer) -> AsyncIterator[Bench]:
    store = await SessionStore.open(folder)
    turns = make_turns()
    try:
        yield Bench(folder, store, MemoryEditor([folder]), fake, turns, Settings())
    finally:
        await turns.mcp.aclose()
        await store.close()
