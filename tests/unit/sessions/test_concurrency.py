"""Several server processes on one folder's store at once.

Appenders commit to their own sessions throughout, while lease holders and
contenders fight over a shared one: every contender meets a live holder
exactly when one exists, a SIGKILLed holder's lease is taken over by
exactly one of several racing contenders, and no row is lost or corrupt.
"""

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from rhema_lsp.engine import Message
from rhema_lsp.sessions import SessionConflictError, SessionStore
from tests.unit.sessions.waiting import eventually

pytestmark = pytest.mark.process  # starts child processes

ROOT = Path(__file__).resolve().parents[3]
ROUNDS = 150


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.unit.sessions.concurrency_child", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def results_of(files: list[Path]) -> list[str]:
    await eventually(lambda: all(f.exists() and f.read_text() for f in files))
    return [f.read_text() for f in files]


async def finish(process: subprocess.Popen[str]) -> int:
    _, err = await anyio.to_thread.run_sync(process.communicate)
    assert process.returncode in (0, -signal.SIGKILL), err
    return process.returncode


async def test_processes_share_the_store_and_leases_refuse_exactly_while_held(
    folder: Path, tmp_path: Path
) -> None:
    store = await SessionStore.open(folder)
    shared = (await store.create("shared")).id
    own = [(await store.create(f"own {i}")).id for i in range(3)]
    release = tmp_path / "release"

    appenders = [spawn("append", str(folder), sid, str(ROUNDS)) for sid in own]

    holder_result = tmp_path / "holder"
    holder = spawn("lease", str(folder), shared, str(holder_result), str(release))
    assert await results_of([holder_result]) == ["acquired"]

    first = [tmp_path / f"first{i}" for i in range(3)]
    contenders = [spawn("lease", str(folder), shared, str(f), str(release)) for f in first]
    for outcome in await results_of(first):
        assert outcome.startswith("busy ")
        assert f"open in another window (process {holder.pid})" in outcome
    for process in contenders:
        assert await finish(process) == 0

    holder.send_signal(signal.SIGKILL)
    assert await finish(holder) == -signal.SIGKILL
    assert (await store.info(shared)).running is False

    second = [tmp_path / f"second{i}" for i in range(3)]
    racers = [spawn("lease", str(folder), shared, str(f), str(release)) for f in second]
    outcomes = await results_of(second)
    winners = [p for p, o in zip(racers, outcomes, strict=True) if o == "acquired"]
    assert len(winners) == 1
    for outcome in outcomes:
        if outcome != "acquired":
            assert f"open in another window (process {winners[0].pid})" in outcome
    assert (await store.info(shared)).running
    release.write_text("go")
    for process in racers:
        assert await finish(process) == 0
    assert (await store.info(shared)).running is False

    for process in appenders:
        assert await finish(process) == 0

    for sid in own:
        history = (await store.load(sid)).history
        expected = []
        for index in range(ROUNDS):
            expected += [Message.user(f"{index}-u"), Message.assistant(f"{index}-a")]
        assert history == expected
    assert (await store.load(shared)).history == [Message.user("held")] * 2
    await store.close()
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT count(*) FROM leases").fetchone() == (0,)


async def test_two_windows_without_leases_conflict_instead_of_interleaving(folder: Path) -> None:
    store = await SessionStore.open(folder)
    sid = (await store.create("p")).id
    mine = await store.load(sid)
    child = spawn("append", str(folder), sid, "1")
    assert await finish(child) == 0
    mine.history.append(Message.user("mine"))
    with pytest.raises(SessionConflictError, match="changed on disk"):
        await store.commit(sid, mine)
    assert (await store.load(sid)).history == [Message.user("0-u"), Message.assistant("0-a")]
    await store.close()
