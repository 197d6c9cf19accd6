"""Fixtures for driving the real server process: a workspace folder, a fake
model server, and a started editor per recorded editor capabilities."""

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


@pytest.fixture(params=EDITORS)
def editor(request: pytest.FixtureRequest) -> str:
    return str(request.param)


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
