"""Words every layer shares: what a run may do, and what a rewind takes back.

They are literal types the editor contract publishes (:mod:`rhema_lsp.contract`),
the tools act on (a mode decides the tool set), the session store records (a
rewind's extent) and both front doors offer. This module is the floor under
every layer, the engine included: it imports nothing but :mod:`typing`, so
each word has one definition that costs nothing to import.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["MODES", "PLAN_STATUSES", "Mode", "PlanStatus", "RewindWhat"]

Mode = Literal["ask", "plan", "edit", "agent"]
"""Which tool set the model is offered: read-only; read-only, the turn ending
with a plan for the user to run; plus edits; plus commands."""

MODES: tuple[Mode, ...] = get_args(Mode)
"""Every mode, from the fewest tools to the most."""

PlanStatus = Literal["pending", "in_progress", "completed"]
"""Where one entry of a plan stands."""

PLAN_STATUSES: tuple[PlanStatus, ...] = get_args(PlanStatus)
"""Every plan entry status, in the order an entry goes through them."""

RewindWhat = Literal["code", "conversation", "both"]
"""What a rewind takes back: the files, the conversation, or both."""
