"""Fixtures for driving the real server process: a workspace folder, a fake
model server, and a started editor: the first recorded editor's capabilities,
or each recorded editor's for a test marked ``per_editor``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.e2e.editor_client import EDITORS, EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "hello.py").write_text('def greet(name):\n    return "hello " + name\n')
    return folder


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="openai") as server:
        yield server


def settings_for(fake: FakeModelServer, **extra: object) -> dict[str, object]:
    return {
        "provider": "custom",
        "protocol": "openai",
        "baseUrl": fake.base_url,
        "model": "fake-model",
        **extra,
    }


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``recorded_editor``: the first recorded editor, or each of them for a
    test marked ``per_editor`` (its outcome depends on the client's
    capabilities: the position encoding its edits are applied in, versions,
    what it declares). A test that parametrizes ``editor`` itself keeps its
    own list, and a module's own ``editor`` fixture its own meaning."""
    if "recorded_editor" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if "editor" in (names.replace(" ", "").split(",") if isinstance(names, str) else names):
            return
    each = metafunc.definition.get_closest_marker("per_editor") is not None
    metafunc.parametrize("recorded_editor", EDITORS if each else EDITORS[:1])


@pytest.fixture
def editor(recorded_editor: str) -> str:
    """The recorded editor whose capabilities the test's client declares."""
    return recorded_editor


@pytest.fixture
async def client(
    editor: str, workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> AsyncIterator[EditorClient]:
    started = await start_editor(
        editor,
        [workspace],
        settings_for(fake, mode="edit"),
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
    )
    yield started
    await started.shutdown_session()
