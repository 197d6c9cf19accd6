"""Images in the store: the bytes once in the blobs (however many messages
and sessions hold them), the rows by reference, read back whole; a missing
image blob is a clear store error, not a guess."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rhema_lsp.engine import Message, Role, Session, TextPart, ToolResult, image_part
from rhema_lsp.sessions import SessionStore, SessionStoreError
from tests.fakes.images import png


async def test_an_image_is_stored_once_and_read_back_whole(store: SessionStore) -> None:
    shot = image_part(png(5, 5), "shot.png")
    history = [
        Message(role=Role.USER, content=[TextPart(text="look"), shot]),
        Message(role=Role.TOOL, content=[ToolResult(id="c1", content="ok", images=(shot,))]),
    ]
    first = await store.create("look", first=history[0])
    await store.commit(first.id, Session(history=history))
    other = await store.create("again", first=history[0])
    with sqlite3.connect(store.path) as conn:
        bodies = [row[0] for row in conn.execute("SELECT body FROM messages")]
        blobs = conn.execute("SELECT count(*) FROM blobs").fetchone()[0]
    assert blobs == 1
    assert all(shot.data not in body for body in bodies)
    for session in (first.id, other.id):
        loaded = (await store.load(session)).history
        assert loaded[0] == history[0]
    assert (await store.load(first.id)).history == history


async def test_a_missing_image_blob_is_a_clear_error(folder: Path) -> None:
    store = await SessionStore.open(folder)
    shot = image_part(png(), "shot.png")
    info = await store.create("look", first=Message(role=Role.USER, content=[shot]))
    path = store.path
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM blobs")
    reopened = await SessionStore.open(folder)
    try:
        with pytest.raises(SessionStoreError, match=r"image shot\.png"):
            await reopened.load(info.id)
    finally:
        await reopened.close()
