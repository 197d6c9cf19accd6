"""What checkpoints cost in the session store: 1,000 turns of small edits.

A project of 30 Python-like files (about 3 to 6 KB each) is edited by 1,000
turns, each changing one to three files by a few lines (a replaced line, an
inserted function, a deleted line), exactly as the server's journal stores
them: the pre-image before a turn's first change to a file, the post-image
hash after. The cost is the store's growth on disk (the database after a
WAL checkpoint) over the same turns' growth without checkpoints (the
conversation alone), against two baselines:

- the changed files' bytes: the size of every file a turn changed, summed
  over the turns (what storing each pre-image whole would cost); the target
  is a ratio under 2;
- the changed bytes: the characters each edit removed and inserted (what
  any diff must at least keep); printed for comparison.

No timed assertion: the figures are printed.
"""

from __future__ import annotations

import random
import sqlite3
import tempfile
import time
from pathlib import Path

import anyio

from rhema_lsp.engine import Message, Session
from rhema_lsp.sessions import SessionStore, TurnStart

Row = tuple[str, float, float | None, float | None, str]

TURNS = 1000
FILES = 30


def _project(rng: random.Random) -> dict[str, str]:
    files = {}
    for index in range(FILES):
        lines = [f'"""Module {index}: generated for the checkpoint benchmark."""', ""]
        for number in range(rng.randint(12, 24)):
            lines += [
                f"def function_{index}_{number}(value: int) -> int:",
                f'    """Return value transformed by rule {number}."""',
                f"    total = value * {rng.randint(2, 99)} + {rng.randint(0, 999)}",
                f"    return total % {rng.randint(100, 9999)}",
                "",
            ]
        files[f"pkg/module_{index}.py"] = "\n".join(lines) + "\n"
    return files


def _edit(rng: random.Random, text: str) -> tuple[str, int]:
    """A small edit of ``text`` and the characters it removed and inserted."""
    lines = text.splitlines(keepends=True)
    at = rng.randrange(len(lines))
    kind = rng.random()
    if kind < 0.5:
        new = f"    total = value * {rng.randint(2, 99)} + {rng.randint(0, 999)}  # tuned\n"
        changed = len(lines[at]) + len(new)
        lines[at] = new
    elif kind < 0.85:
        name = f"helper_{rng.randint(0, 10**6)}"
        new = f"def {name}(value: int) -> int:\n    return value + {rng.randint(1, 99)}\n\n"
        changed = len(new)
        lines.insert(at, new)
    else:
        changed = len(lines[at])
        del lines[at]
    return "".join(lines), changed


def _used(conn: sqlite3.Connection) -> int:
    """The bytes the database's used pages take (after a WAL checkpoint)."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    (free,) = conn.execute("PRAGMA freelist_count").fetchone()
    (size,) = conn.execute("PRAGMA page_size").fetchone()
    return (int(pages) - int(free)) * int(size)


async def _grow(checkpoints: bool) -> tuple[int, int, int, int, int, float]:
    """Run the turns; the store's growth, the baselines, the blobs and the time."""
    rng = random.Random(15)
    files = _project(rng)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = await SessionStore.open(folder)
        info = await store.create("benchmark")
        session = Session(history=[])
        await store.commit(info.id, session)
        empty = await store._db.read("measure", _used)
        changed_files = changed_chars = 0
        started = time.perf_counter()
        for turn in range(1, TURNS + 1):
            session.history.append(Message.user(f"turn {turn}"))
            await store.commit(info.id, session, turn=TurnStart(turn, f"turn {turn}"))
            for name in rng.sample(sorted(files), rng.randint(1, 3)):
                uri = (folder / name).as_uri()
                before = files[name]
                after, changed = _edit(rng, before)
                files[name] = after
                if checkpoints:
                    await store.checkpoints.pre_image(
                        info.id, turn, uri, before.encode(), clean=True
                    )
                    await store.checkpoints.post_image(info.id, turn, uri, after.encode())
                changed_files += len(before.encode())
                changed_chars += changed
            session.history.append(Message.assistant("done"))
            await store.commit(info.id, session)
        elapsed = time.perf_counter() - started

        def settle(conn: sqlite3.Connection) -> tuple[int, int]:
            blobs = conn.execute("SELECT count(*), sum(length(body)) FROM blobs").fetchone()
            return int(blobs[0]), int(blobs[1] or 0)

        count, blob_bytes = await store._db.read("measure", settle)
        grown = await store._db.read("measure", _used) - empty
        await store.close()
    return grown, changed_files, changed_chars, count, blob_bytes, elapsed


async def _measure() -> list[Row]:
    total, changed_files, changed_chars, count, blob_bytes, elapsed = await _grow(True)
    conversation = (await _grow(False))[0]
    cost = total - conversation
    return [
        ("checkpoints: store growth for 1,000 turns [KB]", cost / 1024, None, None, ""),
        (
            "  vs the changed files' bytes [KB]",
            cost / 1024,
            changed_files / 1024,
            cost / changed_files,
            "< 2",
        ),
        (
            "  vs the changed bytes (diff) [KB]",
            cost / 1024,
            changed_chars / 1024,
            cost / changed_chars,
            "",
        ),
        ("  blobs stored; their bodies [KB]", float(count), blob_bytes / 1024, None, ""),
        ("  the conversation alone [KB]", conversation / 1024, None, None, ""),
        ("  per turn, journal + store [ms]", elapsed * 1000 / TURNS, None, None, ""),
    ]


def main() -> list[Row]:
    """Measure, print a table, and return its rows
    ``(figure, value, baseline, ratio, target)``."""
    rows = anyio.run(_measure)
    print(f"{'figure':<48} {'value':>10} {'baseline':>10} {'ratio':>7}  target")
    for figure, value, baseline, ratio, target in rows:
        base = f"{baseline:10.2f}" if baseline is not None else f"{'':>10}"
        rat = f"{ratio:7.3f}" if ratio is not None else f"{'':>7}"
        print(f"{figure:<48} {value:10.2f} {base} {rat}  {target}")
    return rows


if __name__ == "__main__":
    main()
