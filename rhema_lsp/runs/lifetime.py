"""How a front door's process ends: the same way whether its client closes
stdin or the process is sent ``SIGTERM``.

:func:`serve_until_stopped` runs the door's connection as a task that
``SIGTERM`` cancels (an editor that exits, CodeCompanion for one, sends it
instead of closing stdin), and however the connection ends, runs the door's
``close``, shielded: the door cancels its runs (each checkpoints its
session), closes its stores and stops its MCP servers there, while the
connection may still carry their last answers, and only then lets it go.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

__all__ = ["serve_until_stopped"]

logger = logging.getLogger(__name__)


async def serve_until_stopped(
    connection: Coroutine[Any, Any, None], close: Callable[[], Awaitable[None]], *, name: str
) -> None:
    """Await ``connection`` until it ends or ``SIGTERM`` cancels it; then
    ``close()``, shielded from cancellation."""
    loop = asyncio.get_running_loop()
    serving = loop.create_task(connection, name=name)
    # Signals reach only the main thread's loop (a door driven in a test's
    # thread is stopped by its input's end instead).
    handles_signal = threading.current_thread() is threading.main_thread()
    if handles_signal:
        loop.add_signal_handler(signal.SIGTERM, serving.cancel)
    try:
        await serving
    except asyncio.CancelledError:
        if not serving.cancelled():
            raise  # this task was cancelled, not the connection: no SIGTERM
        logger.info("terminated: stopping")
    finally:
        if handles_signal:
            loop.remove_signal_handler(signal.SIGTERM)
        await asyncio.shield(close())
