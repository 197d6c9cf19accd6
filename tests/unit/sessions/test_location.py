"""Where the store lives when the workspace's own ``.rhema`` cannot be trusted.

A cloned repository can carry a ``.rhema`` that is a link, or a database,
``-wal`` or ``.gitignore`` that is one: the store is then kept in the user
state directory (with a notice saying why), and nothing is ever written
through the link.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rhema_lsp.engine import Message, Session
from rhema_lsp.sessions import SessionStore, SessionStoreError


def listing(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


async def use(store: SessionStore) -> None:
    info = await store.create("a prompt")
    await store.commit(info.id, Session(history=[Message.user("a prompt")]))


@pytest.mark.parametrize(
    "trap", ["rhema-link", "database-link", "wal-link", "gitignore-link", "database-hardlink"]
)
async def test_a_store_that_would_write_through_a_link_moves_to_the_state_dir(
    tmp_path: Path, trap: str
) -> None:
    folder = tmp_path / "clone"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victim = elsewhere / "victim"
    victim.write_text("untouched")
    rhema = folder / ".rhema"
    if trap == "rhema-link":
        rhema.symlink_to(elsewhere, target_is_directory=True)
    else:
        rhema.mkdir()
        name = {
            "database-link": "sessions.sqlite3",
            "wal-link": "sessions.sqlite3-wal",
            "gitignore-link": ".gitignore",
            "database-hardlink": "sessions.sqlite3",
        }[trap]
        if trap == "database-hardlink":
            os.link(victim, rhema / name)
        else:
            (rhema / name).symlink_to(victim)
    before = listing(elsewhere)

    state = tmp_path / "state"
    store = await SessionStore.open(folder, state_dir=state)
    try:
        await use(store)
        assert store.path.is_relative_to(state)
        assert store.notice is not None
        assert str(folder) in store.notice
        assert str(store.path) in store.notice
        assert "outside the workspace" in store.notice
    finally:
        await store.close()
    assert listing(elsewhere) == before
    assert victim.read_text() == "untouched"


async def test_a_folder_in_place_of_the_database_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "clone"
    (folder / ".rhema" / "sessions.sqlite3").mkdir(parents=True)
    with pytest.raises(SessionStoreError) as raised:
        await SessionStore.open(folder, state_dir=tmp_path / "state")
    assert "is a folder, not a session store" in str(raised.value)
    assert '"sessionStore": "user"' in str(raised.value)


async def test_a_real_rhema_folder_keeps_the_store_in_the_workspace(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    store = await SessionStore.open(folder, state_dir=tmp_path / "state")
    try:
        await use(store)
        assert store.path == folder / ".rhema" / "sessions.sqlite3"
        assert store.notice is None
    finally:
        await store.close()
    assert (folder / ".rhema" / ".gitignore").read_text() == "*\n"
    assert not (tmp_path / "state").exists()
