"""What a listing shows of a session, and how its title and times are made."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["TITLE_LIMIT", "SessionInfo", "TurnStart", "now_iso", "title_from_prompt"]

TITLE_LIMIT = 80
"""The longest title kept, in characters (an ellipsis marks a cut)."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One session as listed.

    Parameters
    ----------
    id
        The session id.
    folder
        The workspace folder the store belongs to.
    title
        The first prompt, one line, at most :data:`TITLE_LIMIT` characters.
    created_at, updated_at
        ISO 8601 UTC timestamps (``2026-01-31T12:00:00.000000Z``).
    model
        The model of the latest recorded turn ("" before the first).
    turns
        The number of its latest turn (numbers are reserved when a turn
        starts, so a turn a crash cut short counts).
    running
        Whether a live lease (of any process) holds it.
    """

    id: str
    folder: str
    title: str
    created_at: str
    updated_at: str
    model: str
    turns: int
    running: bool


@dataclass(frozen=True, slots=True)
class TurnStart:
    """A turn whose prompt is being committed: its number and its title (the
    prompt's first line, for listings such as a rewind picker)."""

    turn: int
    title: str


def now_iso() -> str:
    """The current time as fixed-width ISO 8601 UTC, so text order is time order."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def title_from_prompt(prompt: str, limit: int = TITLE_LIMIT) -> str:
    """The first non-blank line of ``prompt``, whitespace collapsed, cut to
    ``limit`` characters (at a word boundary when one is near) with ``…``."""
    line = next((" ".join(raw.split()) for raw in prompt.splitlines() if raw.strip()), "")
    if not line:
        return "Untitled session"
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if line[limit - 1] != " " and space >= limit * 2 // 3:
        cut = cut[:space]
    return cut.rstrip() + "…"
