"""Fixtures every in-process test of a door or of the pipeline shares: a
project folder with one file, the user's config and state directories moved
into the test's own (no MCP server or key of the machine's is ever used),
and the fake model server on the OpenAI wire."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.model_server import FakeModelServer

HELLO = 'def greet(name):\n    return "hello " + name\n'
"""``hello.py`` of :func:`project`."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``<tmp>/project`` holding ``hello.py``, in an environment of its own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("RHEMA_API_KEY", raising=False)
    path = tmp_path / "project"
    path.mkdir()
    (path / "hello.py").write_text(HELLO)
    return path


@pytest.fixture
def openai_fake() -> Iterator[FakeModelServer]:
    """The fake model server on the OpenAI-compatible wire."""
    with FakeModelServer(wire="openai") as server:
        yield server
