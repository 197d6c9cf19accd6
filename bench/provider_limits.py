"""What the providers' guards cost: the SSE parser on hostile lines, and the
last key check on a request body.

- A line without a newline, fed in 64 KiB reads (as httpx hands them over):
  twice as long costs twice as much (the parser before was quadratic: 20 MB
  took 3.6 s, 40 MB 13.7 s). Target: ratio <= 2.5.
- A 40 MB line is refused at the 16 MiB event cap, against reading 16 MiB of
  ordinary one-line events in the same reads. Target: ratio <= 1.5.
- The key check on a 1 MiB request body with all six key variables set,
  against encoding that body (``json.dumps``, which every request pays
  anyway). Target: ratio <= 0.5.

Each figure is the best of seven runs (CPU time). Run:
``python -m bench.provider_limits``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

from rhema_lsp.providers.secrets import SERVER_KEY_VARS, KeyGuard
from rhema_lsp.providers.sse import EventTooLong, SSEParser

RUNS = 7
READ = 64 * 1024
MIB = 1024 * 1024

Row = tuple[str, float, float, float, float]


def best_ms(work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(RUNS):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best * 1000


def one_line(size: int) -> None:
    parser = SSEParser(max_event=64 * MIB)
    parser.feed(b"data: ")
    piece = b"x" * READ
    for _ in range(size // READ):
        parser.feed(piece)
    assert len(parser.feed(b"\n\n")) == 1


def refused_line() -> None:
    parser = SSEParser()
    piece = b"x" * READ
    try:
        for _ in range(40 * 1000 * 1000 // READ):
            parser.feed(piece)
    except EventTooLong:
        return
    raise AssertionError("a 40 MB line was not refused")


def ordinary_events(reads: list[bytes]) -> Callable[[], None]:
    def parse() -> None:
        parser = SSEParser()
        for read in reads:
            parser.feed(read)

    return parse


def main() -> list[Row]:
    """Measure; print a table; return its rows."""
    rows: list[Row] = []
    small = best_ms(lambda: one_line(8 * MIB))
    large = best_ms(lambda: one_line(16 * MIB))
    rows.append(("one 16 MiB line, ms (vs 8 MiB)", large, small, large / small, 2.5))

    event = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
    stream = event * (16 * MIB // len(event))
    reads = [stream[i : i + READ] for i in range(0, len(stream), READ)]
    refused = best_ms(refused_line)
    ordinary = best_ms(ordinary_events(reads))
    rows.append(
        (
            "40 MB line refused, ms (vs 16 MiB of one-line events)",
            refused,
            ordinary,
            refused / ordinary,
            1.5,
        )
    )

    keys = {name: f"{name.lower()}-{os.urandom(16).hex()}" for name in SERVER_KEY_VARS}
    guard = KeyGuard(keys)
    text = "def f(x):\n    return x + 1  # sk- AIza gsk_ a token\n" * 40
    payload = {"messages": [{"role": "user", "content": text} for _ in range(MIB // len(text))]}
    body = json.dumps(payload, ensure_ascii=False).encode()
    check = best_ms(lambda: guard.scrub(body, "bench"))
    encode = best_ms(lambda: json.dumps(payload, ensure_ascii=False).encode())
    rows.append(
        ("key check of a 1 MiB body, ms (vs encoding it)", check, encode, check / encode, 0.5)
    )

    print(f"{'figure':<56} {'value':>9} {'baseline':>9} {'ratio':>7} {'target':>7}")
    for figure, value, baseline, ratio, target in rows:
        print(f"{figure:<56} {value:>9.2f} {baseline:>9.2f} {ratio:>7.2f} {target:>7.2f}")
    return rows


if __name__ == "__main__":
    main()
