"""The shapes of ACP ``session/update`` traffic shared by the update stream
and the prompt's other senders: the payloads this agent sends
(:data:`SessionUpdate`), the slice of the client connection that sends them
(:class:`UpdateSender`), one file an edit changed (:class:`FileDiff`), and
the small builders of tool-call content and plan updates. Pure values: no
I/O, no state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    ContentToolCallContent,
    CurrentModeUpdate,
    PlanEntry,
    SessionInfoUpdate,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from rhema_lsp.engine import PlanEntry as EnginePlanEntry

__all__ = [
    "FileDiff",
    "SessionUpdate",
    "UpdateSender",
    "fenced",
    "plan_update",
    "text_content",
]

SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | CurrentModeUpdate
    | UsageUpdate
    | SessionInfoUpdate
    | AgentPlanUpdate
)
"""The ``session/update`` payloads this agent sends."""


class UpdateSender(Protocol):
    """The slice of the SDK's client connection that sends updates."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Send one ``session/update`` notification."""
        ...


@dataclass(frozen=True, slots=True)
class FileDiff:
    """One file an edit changed: the text before (``None``: it did not
    exist) and after, and the first line (0-based) that differs."""

    path: Path
    old: str | None
    new: str
    line: int


def text_content(text: str) -> ContentToolCallContent:
    """Tool call content of plain text."""
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def plan_update(entries: Sequence[EnginePlanEntry]) -> AgentPlanUpdate:
    """The ``plan`` update of a plan, each entry with the priority the model gave it."""
    return AgentPlanUpdate(
        session_update="plan",
        entries=[
            PlanEntry(content=e.content, priority=e.priority, status=e.status) for e in entries
        ],
    )


def fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip()}\n{fence}"
