"""Words every layer shares: what a run may do, what a rewind takes back, and
how a question about trusting a workspace's files is answered.

They are literal types the editor contract publishes (:mod:`rhema_lsp.contract`),
the tools act on (a mode decides the tool set), the session store records (a
rewind's extent) and both front doors offer. This module is the floor under
every layer, the engine included: it imports nothing but :mod:`typing`, so
each word has one definition that costs nothing to import.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "ASK_MCP_WAIT_S",
    "ASK_SIGN_IN_WAIT_S",
    "MCP_RUN_WAIT_ENV",
    "MCP_SIGN_IN_WAIT_ENV",
    "MODES",
    "PLAN_PRIORITIES",
    "PLAN_STATUSES",
    "TRUST_CHOICES",
    "Mode",
    "PlanPriority",
    "PlanStatus",
    "RewindWhat",
    "TrustChoice",
]

Mode = Literal["ask", "plan", "edit", "agent"]
"""Which tool set the model is offered: read-only; read-only, the turn ending
with a plan for the user to run; plus edits; plus commands."""

MODES: tuple[Mode, ...] = get_args(Mode)
"""Every mode, from the fewest tools to the most."""

PlanStatus = Literal["pending", "in_progress", "completed"]
"""Where one entry of a plan stands."""

PLAN_STATUSES: tuple[PlanStatus, ...] = get_args(PlanStatus)
"""Every plan entry status, in the order an entry goes through them."""

PlanPriority = Literal["high", "medium", "low"]
"""How much one entry of a plan matters (ACP shows it; ``medium`` when the
model gives none)."""

PLAN_PRIORITIES: tuple[PlanPriority, ...] = get_args(PlanPriority)
"""Every plan entry priority, the highest first."""

RewindWhat = Literal["code", "conversation", "both"]
"""What a rewind takes back: the files, the conversation, or both."""

TrustChoice = Literal["Use them this time", "Always use them", "Not now", "Never"]
"""An answer to a question about trusting a workspace's own files (the
programs of its ``.mcp.json``): use them this run, always (until the file
changes), not this run, never."""

TRUST_CHOICES: tuple[TrustChoice, ...] = get_args(TrustChoice)
"""The answers of a trust question, in the order asked. A question offering
exactly these is about trust, not an action: a client that approves actions
on its own (``rhema-lsp ask --yes``) must not answer it (headless, only
``--trust-project`` does)."""

MCP_RUN_WAIT_ENV = "RHEMA_MCP_RUN_WAIT"
"""The environment variable that caps, in seconds, how long a run of the
server waits for its MCP servers to start (``rhema-lsp ask`` sets it for the
server it starts: :data:`ASK_MCP_WAIT_S`; :mod:`rhema_lsp.mcp.starting`)."""

ASK_MCP_WAIT_S = 2.0
"""How long a run of ``rhema-lsp ask`` waits for its MCP servers to start:
one that takes longer joins the run once it is ready."""

MCP_SIGN_IN_WAIT_ENV = "RHEMA_MCP_SIGN_IN_WAIT"
"""The environment variable that lets a run wait, in seconds, while the user
signs in to an MCP server (``rhema-lsp ask`` in a terminal sets it:
:data:`ASK_SIGN_IN_WAIT_S`; unset, a run never waits for a sign-in)."""

ASK_SIGN_IN_WAIT_S = 120.0
"""How long ``rhema-lsp ask`` in a terminal waits for an MCP sign-in."""
