"""A session's choices in its store: none until made, replaced whole,
kept across reopening, gone with the session, refused for no session."""

from __future__ import annotations

from pathlib import Path

import pytest

from rhema_lsp.sessions import SessionStore, StoredChoices, UnknownSessionError


async def test_choices_are_kept_replaced_and_deleted_with_the_session(
    store: SessionStore, folder: Path
) -> None:
    info = await store.create("one")
    assert await store.choices.load(info.id) == StoredChoices()
    await store.choices.save(info.id, StoredChoices(mode="ask", model="big", thinking="high"))
    await store.choices.save(info.id, StoredChoices(mode="agent", model="big"))
    reopened = await SessionStore.open(folder)
    try:
        assert await reopened.choices.load(info.id) == StoredChoices(mode="agent", model="big")
    finally:
        await reopened.close()
    await store.delete(info.id)
    assert await store.choices.load(info.id) == StoredChoices()
    with pytest.raises(UnknownSessionError):
        await store.choices.save(info.id, StoredChoices(mode="ask"))
