"""A second window, as a process, for the concurrency test.

``append <folder> <session> <rounds>``: lease the session and append
``rounds`` user/assistant pairs, one commit per pair (alternately durable).

``lease <folder> <session> <result> <release>``: try to lease the session;
write ``acquired`` or ``busy <message>`` to ``<result>``; when acquired,
append one message and hold the lease until ``<release>`` exists.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from rhema_lsp.engine import Message
from rhema_lsp.sessions import SessionBusyError, SessionStore
from tests.unit.sessions.waiting import eventually


async def append(folder: Path, session_id: str, rounds: int) -> None:
    store = await SessionStore.open(folder)
    async with store.lease(session_id):
        session = await store.load(session_id)
        for index in range(rounds):
            session.history.append(Message.user(f"{index}-u"))
            session.history.append(Message.assistant(f"{index}-a"))
            await store.commit(session_id, session, durable=index % 2 == 0)
    await store.close()


async def lease(folder: Path, session_id: str, result: Path, release: Path) -> None:
    store = await SessionStore.open(folder)
    try:
        async with store.lease(session_id):
            session = await store.load(session_id)
            session.history.append(Message.user("held"))
            await store.commit(session_id, session)
            await anyio.Path(result).write_text("acquired")
            await eventually(release.exists)
    except SessionBusyError as exc:
        await anyio.Path(result).write_text(f"busy {exc}")
    await store.close()


def main() -> None:
    mode, folder, session_id = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    if mode == "append":
        anyio.run(append, folder, session_id, int(sys.argv[4]))
    else:
        anyio.run(lease, folder, session_id, Path(sys.argv[4]), Path(sys.argv[5]))


if __name__ == "__main__":
    main()
