"""Fixtures every in-process test of a door, of the pipeline or of the wire
shares: a project folder with one file, this process isolated from the
machine's keys and user files (the user's config and state directories
moved into the test's own, so no MCP server or key of the machine's is ever
used), and the fake model server on the OpenAI wire."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.in_process import isolate
from tests.fakes.model_server import FakeModelServer

HELLO = 'def greet(name):\n    return "hello " + name\n'
"""``hello.py`` of :func:`project` and :func:`workspace`."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``<tmp>/project`` holding ``hello.py``, in an environment of its own."""
    isolate(monkeypatch, tmp_path)
    monkeypatch.delenv("RHEMA_API_KEY", raising=False)
    path = tmp_path / "project"
    path.mkdir()
    (path / "hello.py").write_text(HELLO)
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """``<tmp>/project`` holding ``hello.py`` (the environment left as it is)."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "hello.py").write_text(HELLO)
    return folder


@pytest.fixture
def quiet_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key of the machine's, the user's config and state in the test's folder."""
    isolate(monkeypatch, tmp_path)


@pytest.fixture
def openai_fake() -> Iterator[FakeModelServer]:
    """The fake model server on the OpenAI-compatible wire."""
    with FakeModelServer(wire="openai") as server:
        yield server
