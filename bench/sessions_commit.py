"""Session store: commit cost against history length, and open+resume time.

A commit appends only what is new, so committing one round (an assistant
tool-use message and its result) should cost the same on a 10-message
history as on a 10,000-message one: the ratio last/first targets <= 2.
Also timed: opening the store and resuming a 10,000-message session that a
crash left with a pending safe and a pending unsafe call.

Run ``python -m bench.sessions_commit``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import anyio

from rhema_lsp.engine import (
    Event,
    Message,
    ReplaySafety,
    Role,
    Session,
    TextPart,
    ToolCall,
    ToolContext,
    ToolResolver,
    ToolResult,
    ToolSpec,
)
from rhema_lsp.sessions import SessionStore

Row = tuple[str, float, float | None, float | None, str]

LENGTHS = (10, 1_000, 10_000)
COMMITS = 30


class _Sink:
    def emit(self, event: Event) -> None:
        del event


class _Resolver(ToolResolver):
    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name="read", description="read")]

    def replay_safety(self, name: str) -> ReplaySafety:
        return ReplaySafety.SAFE if name == "read" else ReplaySafety.UNSAFE

    async def resolve(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        return ToolResult.success(call.id, "contents " * 50)


def _round(index: int, *, pending: bool = False) -> list[Message]:
    calls = [ToolCall(id=f"c{index}", name="read", args={"path": f"src/file_{index}.py"})]
    if pending:
        calls.append(ToolCall(id=f"w{index}", name="write", args={"path": "x", "content": "y"}))
    ask = Message(role=Role.ASSISTANT, content=[TextPart(text="Let me look. " * 10), *calls])
    if pending:
        return [ask]
    answer = Message(role=Role.TOOL, content=[ToolResult.success(f"c{index}", "line\n" * 200)])
    return [ask, answer]


def _history(length: int) -> list[Message]:
    history = [Message.user("Refactor the parser please. " * 8)]
    index = 0
    while len(history) < length:
        history.extend(_round(index))
        index += 1
    return history[:length]


async def _commit_cost(root: Path, length: int, *, durable: bool) -> float:
    folder = root / f"commit-{length}-{durable}"
    folder.mkdir()
    store = await SessionStore.open(folder)
    info = await store.create("bench")
    session = Session(history=_history(length))
    await store.commit(info.id, session, durable=False)
    timings = []
    for index in range(COMMITS):
        session.history.extend(_round(length + index))
        start = time.perf_counter()
        await store.commit(info.id, session, durable=durable)
        timings.append(time.perf_counter() - start)
    await store.close()
    return statistics.median(timings)


async def _open_and_resume(root: Path, length: int, attempt: int) -> float:
    folder = root / f"resume-{length}-{attempt}"
    folder.mkdir()
    store = await SessionStore.open(folder)
    info = await store.create("bench")
    history = _history(length - 1) + _round(length, pending=True)
    await store.commit(info.id, Session(history=history), durable=False)
    await store.close()
    start = time.perf_counter()
    reopened = await SessionStore.open(folder)
    session, report = await reopened.open_and_resume(
        info.id, _Resolver(), _Sink(), ToolContext(cwd=folder)
    )
    elapsed = time.perf_counter() - start
    assert report.rerun and report.interrupted and len(session.history) == length + 2
    await reopened.close()
    return elapsed


async def _measure() -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for durable in (True, False):
            label = "durable" if durable else "checkpoint"
            costs = [await _commit_cost(root, length, durable=durable) for length in LENGTHS]
            for length, cost in zip(LENGTHS, costs, strict=True):
                rows.append(
                    (
                        f"commit 1 round ({label}) at {length:,} msgs [ms]",
                        cost * 1000,
                        costs[0] * 1000,
                        cost / costs[0],
                        "ratio <= 2" if length == LENGTHS[-1] else "",
                    )
                )
        small = min([await _open_and_resume(root, 10, attempt) for attempt in range(3)])
        large = min([await _open_and_resume(root, 10_000, attempt) for attempt in range(3)])
        rows.append(("open+resume 10 msgs [ms]", small * 1000, None, None, ""))
        rows.append(
            ("open+resume 10,000 msgs [ms]", large * 1000, small * 1000, large / small, "< 1000 ms")
        )
    return rows


def main() -> list[Row]:
    """Measure, print a table, and return its rows
    ``(figure, value, baseline, ratio, target)``."""
    rows = anyio.run(_measure)
    print(f"{'figure':<48} {'value':>10} {'baseline':>10} {'ratio':>7}  target")
    for figure, value, baseline, ratio, target in rows:
        base = f"{baseline:10.2f}" if baseline is not None else f"{'':>10}"
        rat = f"{ratio:7.2f}" if ratio is not None else f"{'':>7}"
        print(f"{figure:<48} {value:10.2f} {base} {rat}  {target}")
    return rows


if __name__ == "__main__":
    main()
