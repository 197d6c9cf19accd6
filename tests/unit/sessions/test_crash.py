"""SIGKILL at every persistence point, many times each, then check the store.

After each kill: the store opens without being moved aside, every session
loads, every prefix the child saw committed is still there unchanged, and no
unsafe call started twice. Then the session is resumed and finished in this
process, and the same holds with every call answered.
"""

import collections
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rhema_lsp.engine import Role, Session
from rhema_lsp.sessions import SessionStore
from tests.unit.sessions.crash_child import POINTS, digest, drive, finished_turns
from tests.unit.sessions.scripted import side_lines

pytestmark = pytest.mark.process  # starts child processes

TURNS = 5
KILLS_PER_POINT = 10
ROOT = Path(__file__).resolve().parents[3]


def run_child(folder: Path, workdir: Path, point: str, at: int) -> int:
    env = {**os.environ, "RHEMA_CRASH_POINT": point, "RHEMA_CRASH_AT": str(at)}
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.unit.sessions.crash_child",
            str(folder),
            str(workdir),
            str(TURNS),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode in (0, -signal.SIGKILL), child.stderr
    return child.returncode


async def check_store(folder: Path, workdir: Path) -> Session:
    store = await SessionStore.open(folder)
    assert store.notice is None
    listed = await store.list()
    assert len(listed) <= 1
    sessions = [await store.load(info.id) for info in listed]
    await store.close()
    history = sessions[0].history if sessions else []
    log = workdir / "commits.log"
    for line in log.read_text().splitlines() if log.exists() else []:
        count, expected = line.split()
        assert len(history) >= int(count), "a committed message was lost"
        assert digest(history[: int(count)]) == expected, "a committed message changed"
    starts = collections.Counter(
        line.split()[1] for line in side_lines(workdir / "side.log") if line.startswith("start ")
    )
    assert all(n == 1 for n in starts.values()), f"unsafe call run twice: {starts}"
    return Session(history=history)


@pytest.mark.parametrize("point", POINTS)
async def test_sigkill_at_every_persistence_point_loses_nothing_and_repeats_nothing(
    tmp_path: Path, point: str
) -> None:
    kills = 0
    for at in range(1, KILLS_PER_POINT + 1):
        folder, workdir = tmp_path / f"ws{at}", tmp_path / f"work{at}"
        folder.mkdir()
        workdir.mkdir()
        if run_child(folder, workdir, point, at) == -signal.SIGKILL:
            kills += 1
        await check_store(folder, workdir)

        await drive(folder, workdir, TURNS, lambda name: None)
        final = await check_store(folder, workdir)
        assert finished_turns(final.history) == TURNS
        calls = [c.id for m in final.history for c in m.tool_calls]
        results = [r.id for m in final.history if m.role is Role.TOOL for r in m.tool_results]
        assert sorted(calls) == sorted(results)
        assert len(set(calls)) == len(calls)
        ended = {
            line.split()[1] for line in side_lines(workdir / "side.log") if line.startswith("end ")
        }
        for message in final.history:
            for result in message.tool_results:
                if "write" in result.id and not result.is_error:
                    assert result.id in ended  # a success result means the effect ran once
        interrupted = [
            r.id for m in final.history for r in m.tool_results if "interrupted" in r.content
        ]
        if point in ("in_tool", "after_tool"):
            assert len(interrupted) == 1
            assert "write" in interrupted[0]
        elif point in ("before_commit", "in_commit"):
            assert interrupted == []
    assert kills == KILLS_PER_POINT, f"only {kills} of the children reached {point}"
