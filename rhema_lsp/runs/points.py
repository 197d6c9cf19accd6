"""The named points of a turn where something has just been made durable.

The pipeline (:mod:`rhema_lsp.runs.turn`) calls its ``on_point`` hook, when
one is given, with each name below right after the step it names, in this
order within a turn (the change points once per file change, the compaction
point whenever a compaction is made). It is test instrumentation in the
manner of the session store's ``on_event``: a crash test kills the process
at a point and checks what the next process finds. ``None`` in production;
the hook must not raise.

:func:`kill_switch` is the hook a crash test drives a real process with: the
environment variable ``RHEMA_KILL_AT`` names a point (``name`` or
``name@n``, the *n*-th time it is passed, from 1) at which the process
SIGKILLs itself. Unset (always, outside such tests), there is no hook.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Mapping

__all__ = [
    "CHANGE_APPLIED",
    "CHANGE_PREPARED",
    "CHANGE_RECORDED",
    "COMPACTION_COMMITTED",
    "INTENT_COMMITTED",
    "KILL_AT",
    "LEASE_HELD",
    "POINTS",
    "PROMPT_COMMITTED",
    "RESUMED",
    "STEP_COMMITTED",
    "TURN_CHECKPOINTED",
    "TURN_RECORDED",
    "TURN_RESERVED",
    "PointHook",
    "kill_switch",
]

PointHook = Callable[[str], None]
"""Receives the name of each point a turn passes."""

TURN_RESERVED = "turn.reserved"
"""The turn's number is reserved (a new session: created with its prompt)."""

LEASE_HELD = "lease.held"
"""The session's lease is taken; nothing of the turn is stored yet."""

RESUMED = "resumed"
"""A round a crash left open is completed and committed (or there was none)."""

PROMPT_COMMITTED = "prompt.committed"
"""The user's message is committed with the turn's start (its ``TurnStart``)."""

COMPACTION_COMMITTED = "compaction.committed"
"""A compaction is committed, before its ``compaction`` event is sent."""

INTENT_COMMITTED = "intent.committed"
"""A step's tool-use answer is committed, durably, before its first tool runs."""

CHANGE_PREPARED = "change.prepared"
"""A file's pre-image is committed and its change marked as being applied
(its outcome unknown), before the change is sent to the editor."""

CHANGE_APPLIED = "change.applied"
"""The editor applied a change; its post-image is not recorded yet."""

CHANGE_RECORDED = "change.recorded"
"""The change's post-image is committed."""

STEP_COMMITTED = "step.committed"
"""A step's results are checkpointed, before the next step starts."""

TURN_CHECKPOINTED = "turn.checkpointed"
"""The run's last checkpoint (after the end, an error or a cancellation)."""

TURN_RECORDED = "turn.recorded"
"""The finished turn is recorded as ended."""

POINTS = (
    TURN_RESERVED,
    LEASE_HELD,
    RESUMED,
    PROMPT_COMMITTED,
    COMPACTION_COMMITTED,
    INTENT_COMMITTED,
    CHANGE_PREPARED,
    CHANGE_APPLIED,
    CHANGE_RECORDED,
    STEP_COMMITTED,
    TURN_CHECKPOINTED,
    TURN_RECORDED,
)
"""Every point, in the order a turn with tools passes them."""

KILL_AT = "RHEMA_KILL_AT"
"""The environment variable :func:`kill_switch` reads."""


def kill_switch(env: Mapping[str, str] | None = None) -> PointHook | None:
    """The hook that SIGKILLs this process where ``RHEMA_KILL_AT`` says
    (``None`` when it is unset or names no point)."""
    wanted = (os.environ if env is None else env).get(KILL_AT, "")
    name, _, nth = wanted.partition("@")
    if name not in POINTS:
        return None
    at = int(nth) if nth.isdigit() and int(nth) > 0 else 1
    seen = 0

    def on_point(point: str) -> None:
        nonlocal seen
        if point == name:
            seen += 1
            if seen == at:
                os.kill(os.getpid(), signal.SIGKILL)

    return on_point
