"""A folder's session store is opened once, even when commands ask for it together."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from rhema_lsp.server.folders import Folders
from rhema_lsp.sessions import SessionStore


async def test_concurrent_callers_share_one_opening_of_a_new_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = SessionStore.open
    opened: list[Path] = []

    async def slow_open(folder: Path, **options: Any) -> SessionStore:
        opened.append(folder)
        await asyncio.sleep(0.05)  # the other callers arrive meanwhile
        return await real_open(folder, **options)

    monkeypatch.setattr(SessionStore, "open", slow_open)
    folders = Folders(cast(Any, None))
    states = await asyncio.gather(*[folders.state(tmp_path, "workspace") for _ in range(5)])
    try:
        assert opened == [tmp_path]
        assert all(state is states[0] for state in states)
    finally:
        await folders.close()
