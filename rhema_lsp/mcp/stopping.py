"""How long a stdio server may take to stop: short, so exiting never waits
on a hung child.

The SDK stops a stdio server as the spec says (close its stdin, wait, then
``SIGTERM`` its process group, wait, then ``SIGKILL``), with waits of its
own choosing (two seconds each: up to four seconds for a child that ignores
both, on every exit and every restart). :func:`bound_stops` sets them to
:data:`STDIN_GRACE_S` and :data:`TERM_GRACE_S`: a server that exits on
end of input (every well-behaved one) is gone at once, a hung one is killed
within about a second. Called once, where the stdio transport is imported
(:mod:`rhema_lsp.mcp.transports`).
"""

from __future__ import annotations

import mcp.client.stdio as sdk_stdio

__all__ = ["STDIN_GRACE_S", "TERM_GRACE_S", "bound_stops"]

STDIN_GRACE_S = 0.5
"""How long a server may take to exit once its stdin closed."""
TERM_GRACE_S = 0.5
"""How long it may take after ``SIGTERM`` before ``SIGKILL``."""


def bound_stops() -> None:
    """Shorten the SDK's stop waits to this module's bounds (idempotent)."""
    sdk_stdio.PROCESS_TERMINATION_TIMEOUT = min(
        sdk_stdio.PROCESS_TERMINATION_TIMEOUT, STDIN_GRACE_S
    )
    sdk_stdio.FORCE_KILL_TIMEOUT = min(sdk_stdio.FORCE_KILL_TIMEOUT, TERM_GRACE_S)
