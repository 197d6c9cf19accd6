from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rhema_lsp.sessions import SessionStore


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
async def store(folder: Path) -> AsyncIterator[SessionStore]:
    opened = await SessionStore.open(folder)
    yield opened
    await opened.close()
