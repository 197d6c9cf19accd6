"""Fixtures the real-editor suites share: a workspace folder and a fake model server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.model_server import FakeModelServer


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / ".git").mkdir()
    (folder / "hello.py").write_text('def greet(name):\n    return "hello " + name\n')
    return folder


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="openai") as server:
        yield server
