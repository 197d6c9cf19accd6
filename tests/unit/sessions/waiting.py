"""Waiting for another process's observable effect, without a timed assertion."""

from __future__ import annotations

from collections.abc import Callable

import anyio

PATIENCE_S = 60.0


async def eventually(condition: Callable[[], bool], *, poll_s: float = 0.02) -> None:
    """Return once ``condition()`` holds; fail after a generous deadline.

    Polls because the state lives in another process or a database row,
    which no in-process event can signal.
    """
    with anyio.fail_after(PATIENCE_S):
        for _ in iter(int, 1):
            if condition():
                return
            await anyio.sleep(poll_s)
