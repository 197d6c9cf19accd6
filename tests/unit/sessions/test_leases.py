import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from rhema_lsp.engine import Message, Session
from rhema_lsp.sessions import SessionBusyError, SessionStore, UnknownSessionError
from tests.unit.sessions.waiting import eventually


def write_lease(path: Path, session_id: str, *, pid: int, host: str, age: float) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO leases VALUES (?, 'someone', ?, ?, ?)",
            (session_id, pid, host, time.time() - age),
        )


def lease_row(path: Path, session_id: str) -> tuple[str, int] | None:
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT holder, pid FROM leases WHERE session_id = ?", (session_id,)
        ).fetchone()
    return None if row is None else (row[0], row[1])


def heartbeat_of(path: Path, session_id: str) -> float:
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT heartbeat_at FROM leases WHERE session_id = ?", (session_id,)
        ).fetchone()
    return float(row[0])


def dead_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(child.stdout)


async def test_another_window_gets_a_clear_busy_error_but_can_read(
    store: SessionStore, folder: Path
) -> None:
    info = await store.create("p")
    await store.commit(info.id, Session(history=[Message.user("hi")]))
    other = await SessionStore.open(folder)
    async with store.lease(info.id):
        assert lease_row(store.path, info.id) == (store.holder, os.getpid())
        # one process is one window: the other store's holder is this process
        pattern = rf"running in this window \(process {os.getpid()}\)"
        with pytest.raises(SessionBusyError, match=pattern) as caught:
            async with other.lease(info.id):
                pytest.fail("two holders")
        assert caught.value.pid == os.getpid()
        assert (await other.load(info.id)).history == [Message.user("hi")]
        assert (await other.info(info.id)).running
        assert [i.running for i in await other.list()] == [True]
    assert lease_row(store.path, info.id) is None
    assert not (await other.info(info.id)).running
    async with other.lease(info.id):
        assert (await store.info(info.id)).running
    await other.close()


async def test_a_second_run_in_the_same_window_is_refused(store: SessionStore) -> None:
    info = await store.create("p")
    async with store.lease(info.id):
        with pytest.raises(SessionBusyError, match="already running in this window") as caught:
            async with store.lease(info.id):
                pytest.fail("two runs")
        assert caught.value.same_process
    async with store.lease(info.id):
        pass


async def test_the_lease_is_released_on_error_and_on_cancellation(
    store: SessionStore,
) -> None:
    info = await store.create("p")
    with pytest.raises(RuntimeError, match="boom"):
        async with store.lease(info.id):
            raise RuntimeError("boom")
    assert lease_row(store.path, info.id) is None
    with anyio.move_on_after(0.05):
        async with store.lease(info.id):
            await anyio.sleep_forever()
    assert lease_row(store.path, info.id) is None


async def test_leasing_an_unknown_session_says_so(store: SessionStore) -> None:
    with pytest.raises(UnknownSessionError):
        async with store.lease("nope"):
            pass


@pytest.mark.process
async def test_a_lease_whose_process_died_is_taken_over_at_once(store: SessionStore) -> None:
    info = await store.create("p")
    write_lease(store.path, info.id, pid=dead_pid(), host=socket.gethostname(), age=0)
    assert not (await store.info(info.id)).running
    async with store.lease(info.id):
        assert lease_row(store.path, info.id) == (store.holder, os.getpid())


async def test_a_remote_holder_is_trusted_until_its_heartbeat_is_stale(
    store: SessionStore,
) -> None:
    info = await store.create("p")
    write_lease(store.path, info.id, pid=1, host="elsewhere", age=1)
    with pytest.raises(SessionBusyError, match=r"open in another window .process 1.*expires"):
        async with store.lease(info.id):
            pass
    write_lease(store.path, info.id, pid=1, host="elsewhere", age=store.lease_ttl + 1)
    async with store.lease(info.id):
        assert (await store.info(info.id)).running


async def test_the_heartbeat_renews_and_notices_a_takeover(folder: Path) -> None:
    store = await SessionStore.open(folder, lease_ttl=0.3)
    info = await store.create("p")
    async with store.lease(info.id) as lease:
        first = heartbeat_of(store.path, info.id)
        await eventually(lambda: heartbeat_of(store.path, info.id) > first)
        write_lease(store.path, info.id, pid=1, host="elsewhere", age=0)
        await eventually(lambda: lease.lost)
    # leaving did not remove the other holder's lease
    assert lease_row(store.path, info.id) == ("someone", 1)
    await store.close()


async def test_a_running_session_cannot_be_deleted(store: SessionStore, folder: Path) -> None:
    info = await store.create("p")
    other = await SessionStore.open(folder)
    async with store.lease(info.id):
        with pytest.raises(SessionBusyError, match="this window"):
            await other.delete(info.id)
        with pytest.raises(SessionBusyError, match="this window"):
            await store.delete(info.id)
    assert await other.delete(info.id)
    await other.close()
