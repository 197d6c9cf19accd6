"""What a session offers, as the wire's JSON: its modes and its ``configOptions``.

Built without the ACP SDK, so that the door can answer ``session/new`` before
the SDK loads (:mod:`~rhema_lsp.acp.ready`). The SDK path builds its models
from the same JSON (:data:`~rhema_lsp.acp.sessions.SESSION_MODES`,
:func:`~rhema_lsp.acp.config.config_options`), so both offer the same thing;
the keys are in the SDK's field order, so both send the same bytes
(``tests/unit/acp/test_ready.py`` compares them).

The rules: plain data, no I/O; it imports nothing but the vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rhema_lsp.vocabulary import MODES, Mode

if TYPE_CHECKING:
    from rhema_lsp.runs.settings import Thinking

__all__ = [
    "MODE",
    "MODEL",
    "MODE_DESCRIPTIONS",
    "THINKING",
    "THINKING_LEVELS",
    "WORKTREE",
    "WORKTREE_ENTRY",
    "mode_entries",
    "option_entries",
    "session_modes",
]

MODE = "mode"
"""The id of the mode option."""

MODEL = "model"
"""The id of the model option."""

THINKING = "thinking"
"""The id of the thinking option."""

MODE_DESCRIPTIONS: dict[Mode, tuple[str, str]] = {
    "ask": ("Ask", "Read and search the workspace; no changes"),
    "plan": ("Plan", "Read and search, then propose a plan; switch to Edit or Agent to run it"),
    "edit": ("Edit", "Also change files, through the editor's buffers"),
    "agent": ("Agent", "Also run commands, each approved by you unless allow-listed"),
}
"""Each mode's name and description, as the client shows them."""

THINKING_LEVELS: dict[Thinking, tuple[str, str]] = {
    "default": ("Default", "The model server's own default (nothing is sent)"),
    "low": ("Low", "Little reasoning: faster, cheaper"),
    "medium": ("Medium", "Some reasoning"),
    "high": ("High", "Much reasoning: slower, more thorough"),
}
"""The thinking levels offered, as the ``thinking`` setting has them."""


WORKTREE = "worktree"
"""The option's id."""

WORKTREE_ENTRY = {
    "id": WORKTREE,
    "name": "Worktree",
    "description": (
        "Run this new session in its own git worktree on branch rhema/<session>, "
        "leaving your checkout as it is (set it before the first prompt)"
    ),
    "type": "boolean",
}
"""The option as ``configOptions`` lists it (its ``currentValue`` added)."""


def mode_entries() -> list[dict[str, str]]:
    """The session modes (``SessionMode``), one per tool set."""
    return [
        {"id": mode, "name": MODE_DESCRIPTIONS[mode][0], "description": MODE_DESCRIPTIONS[mode][1]}
        for mode in MODES
    ]


def session_modes(current: Mode) -> dict[str, Any]:
    """A session's ``modes`` (``SessionModeState``), ``current`` among them."""
    return {"currentModeId": current, "availableModes": mode_entries()}


def option_entries(
    mode: Mode,
    model: str | None,
    models: Sequence[str],
    thinking: Thinking = "default",
    worktree: bool | None = None,
) -> list[dict[str, Any]]:
    """A session's ``configOptions``: its ``mode``, its ``model`` among
    ``models`` (no model option when ``model`` is ``None``: no provider is
    set up, or it is not resolved yet), its ``thinking`` level and whether
    it runs in a ``worktree`` (:mod:`~rhema_lsp.acp.worktrees`; a boolean
    option, so ``None`` for a client that takes no boolean options: not offered)."""
    options: list[dict[str, Any]] = [
        {
            "currentValue": mode,
            "options": [
                {"value": entry["id"], "name": entry["name"], "description": entry["description"]}
                for entry in mode_entries()
            ],
            "id": MODE,
            "name": "Mode",
            "description": "Which tools the agent may use",
            "category": "mode",
            "type": "select",
        }
    ]
    if model is not None:
        options.append(
            {
                "currentValue": model,
                "options": [{"value": m, "name": m} for m in models],
                "id": MODEL,
                "name": "Model",
                "description": "The model the session's next request goes to",
                "category": "model",
                "type": "select",
            }
        )
    options.append(
        {
            "currentValue": thinking,
            "options": [
                {"value": level, "name": name, "description": description}
                for level, (name, description) in THINKING_LEVELS.items()
            ],
            "id": THINKING,
            "name": "Thinking",
            "description": "How much the model reasons before it answers",
            "category": "thought_level",
            "type": "select",
        }
    )
    if worktree is not None:
        options.append({"currentValue": worktree, **WORKTREE_ENTRY})
    return options
