"""What ``rhema.status`` says of skills and custom slash commands: each
folder's, as a turn (or a ``/name`` prompt) starting now would read them,
and every file left out with why (each problem also logged, once)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from rhema_lsp.contract import ExtensionStatus
from rhema_lsp.runs.slash import read_commands
from rhema_lsp.runs.turn import Turns

__all__ = ["extensions_status"]


async def extensions_status(turns: Turns, roots: Sequence[Path]) -> list[ExtensionStatus]:
    """The skills and commands of each of ``roots``, then the problems."""
    found: list[ExtensionStatus] = []
    for folder in roots:
        commands = await read_commands(folder, turns.mcp.config_path)
        turns.skills.report(commands.problems)
        for command in commands.commands:
            found.append(
                ExtensionStatus(
                    folder=str(folder),
                    kind="skill" if command.skill else "command",
                    name=command.name,
                    path=command.shown,
                    description=command.description,
                    argument_hint=command.hint,
                )
            )
        for problem in commands.problems:
            kind: Literal["skill", "command"] = (
                "skill" if problem.shown.endswith("SKILL.md") else "command"
            )
            found.append(
                ExtensionStatus(
                    folder=str(folder),
                    kind=kind,
                    name="",
                    path=problem.shown,
                    problem=problem.problem,
                )
            )
    return found
