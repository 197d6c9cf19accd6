"""Fixtures every in-process test of a door, of the pipeline or of the wire
shares: a project folder with one file, this process isolated from the
machine's keys and user files (the user's config and state directories
moved into the test's own, so no MCP server or key of the machine's is ever
used), and the fake model server on the OpenAI wire."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.tools.sandbox import availability
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


@pytest.fixture
def folder(project: Path) -> Path:
    """The folder a door's test serves: :func:`project`."""
    return project


@pytest.fixture
def fake(openai_fake: FakeModelServer) -> FakeModelServer:
    """The model a door's test scripts: :func:`openai_fake`."""
    return openai_fake


@pytest.fixture(scope="session", autouse=True)
def _sandbox_probed() -> None:
    """Whether this machine can sandbox commands, probed once per process
    (it runs ``bwrap``) before any test, so a test that only asks
    ``rhema.status`` or decides about a command starts no process itself."""
    availability()


@pytest.fixture(autouse=True)
def _children_only_when_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """A unit test starts no child process unless it is marked ``process``.

    Every way a test starts one (``subprocess``, asyncio's and anyio's
    process APIs, the fake servers run as programs) goes through
    ``subprocess.Popen._execute_child``; the first unmarked start fails the
    test, naming the program, so the marker says the truth and the fast
    lane can leave such tests out (``-m "unit and not process"``).
    """
    if request.node.get_closest_marker("process") is not None:
        yield
        return
    started: list[str] = []
    original = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def execute_child(self: subprocess.Popen[Any], args: Any, *rest: Any) -> Any:
        started.append(str(args if isinstance(args, str | bytes) else args[0]))
        return original(self, args, *rest)

    subprocess.Popen._execute_child = execute_child  # type: ignore[attr-defined]
    try:
        yield
    finally:
        subprocess.Popen._execute_child = original  # type: ignore[attr-defined]
    if started:
        pytest.fail(
            f"a unit test started {started[0]!r} without the `process` marker "
            "(mark it: pytestmark = pytest.mark.process)",
            pytrace=False,
        )
