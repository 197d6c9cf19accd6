"""Fixtures of the ACP loopback tests: a workspace, a fake model server, and
a state directory for the agent's log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.model_server import FakeModelServer


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "hello.py").write_text('def greet(name):\n    return "hello " + name\n')
    return folder


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="openai") as server:
        yield server
