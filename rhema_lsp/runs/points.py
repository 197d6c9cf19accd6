"""The named points of a turn where something has just been made durable.

The pipeline (:mod:`rhema_lsp.runs.turn`) calls its ``on_point`` hook, when
one is given, with each name below right after the step it names, in this
order within a turn. It is test instrumentation in the manner of the session
store's ``on_event``: a crash test kills the process at a point and checks
what the next process finds. ``None`` in production; the hook must not raise.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = [
    "INTENT_COMMITTED",
    "LEASE_HELD",
    "POINTS",
    "PROMPT_COMMITTED",
    "RESUMED",
    "STEP_COMMITTED",
    "TURN_CHECKPOINTED",
    "TURN_RECORDED",
    "PointHook",
]

PointHook = Callable[[str], None]
"""Receives the name of each point a turn passes."""

LEASE_HELD = "lease.held"
"""The session's lease is taken; nothing of the turn is stored yet."""

RESUMED = "resumed"
"""A round a crash left open is completed and committed (or there was none)."""

PROMPT_COMMITTED = "prompt.committed"
"""The user's message is committed with the turn's start (its ``TurnStart``)."""

INTENT_COMMITTED = "intent.committed"
"""A step's tool-use answer is committed, durably, before its first tool runs."""

STEP_COMMITTED = "step.committed"
"""A step's results are checkpointed, before the next step starts."""

TURN_CHECKPOINTED = "turn.checkpointed"
"""The run's last checkpoint (after the end, an error or a cancellation)."""

TURN_RECORDED = "turn.recorded"
"""The finished turn is counted in the session's listing."""

POINTS = (
    LEASE_HELD,
    RESUMED,
    PROMPT_COMMITTED,
    INTENT_COMMITTED,
    STEP_COMMITTED,
    TURN_CHECKPOINTED,
    TURN_RECORDED,
)
"""Every point, in the order a turn with tools passes them."""
