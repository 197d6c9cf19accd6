import os
import sqlite3
from pathlib import Path

import pytest

from rhema_lsp.engine import Message, Session
from rhema_lsp.sessions import SessionStore


async def filled_store(folder: Path, messages: int) -> Path:
    store = await SessionStore.open(folder)
    info = await store.create("p")
    history = [Message.user(f"message {i} " + "x" * 300) for i in range(messages)]
    await store.commit(info.id, Session(history=history))
    path = store.path
    await store.close()
    return path


def overwrite(path: Path, offset: int, garbage: bytes) -> None:
    with path.open("r+b") as handle:
        handle.seek(offset)
        handle.write(garbage)


@pytest.mark.parametrize("where", ["header", "pages"])
async def test_a_corrupt_store_is_moved_aside_and_a_fresh_one_works(
    folder: Path, where: str
) -> None:
    path = await filled_store(folder, 200)
    size = path.stat().st_size
    if where == "header":
        overwrite(path, 0, b"this is not a database at all" * 20)
    else:
        overwrite(path, 4096, os.urandom(size - 8192))
    damaged = path.read_bytes()

    store = await SessionStore.open(folder)
    assert store.notice is not None
    asides = list(path.parent.glob("sessions.sqlite3.corrupt-*"))
    assert len(asides) == 1
    aside = next(a for a in asides if not a.name.endswith(("-wal", "-shm")))
    assert aside.read_bytes() == damaged
    assert str(path) in store.notice
    assert str(aside) in store.notice
    assert "fresh store" in store.notice

    assert await store.list() == []
    info = await store.create("new")
    await store.commit(info.id, Session(history=[Message.user("again")]))
    await store.close()
    reopened = await SessionStore.open(folder)
    assert reopened.notice is None
    assert [i.id for i in await reopened.list()] == [info.id]
    await reopened.close()


async def test_a_store_made_of_garbage_from_the_start_is_replaced(folder: Path) -> None:
    rhema = folder / ".rhema"
    rhema.mkdir()
    (rhema / "sessions.sqlite3").write_bytes(os.urandom(10_000))
    store = await SessionStore.open(folder)
    assert store.notice is not None
    assert "could not be read" in store.notice
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    await store.close()
