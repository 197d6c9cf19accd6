from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.model_server import FakeModelServer


@pytest.fixture(params=["openai", "anthropic", "gemini"])
def any_wire(request: pytest.FixtureRequest) -> Iterator[FakeModelServer]:
    """A fake server for each wire in turn."""
    with FakeModelServer(wire=request.param) as server:
        yield server


@pytest.fixture
def openai_server() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="openai") as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="anthropic") as server:
        yield server


@pytest.fixture
def gemini_server() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="gemini") as server:
        yield server
