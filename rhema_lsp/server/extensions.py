"""Skills and custom slash commands as the language server shows them.

``rhema.status`` lists each folder's, as a turn (or a ``/name`` prompt)
starting now would read them, and every file left out with why (each
problem also logged, once). ``rhema.mcpPrompts`` lists them too, after the
MCP servers' prompts, under the pseudo-server :data:`CUSTOM_COMMANDS` with
one optional argument (the words after the name), so a client's ``/``
completion offers them with no change of its own; ``rhema.mcpPrompt`` of
one answers the typed text back (``/name words``), which the door kit
expands when it is sent as a turn (:meth:`~rhema_lsp.runs.door.Door.expand`:
the one expansion, with the command's mode and model)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from rhema_lsp.contract import ExtensionStatus, McpPromptArgument, McpPromptInfo
from rhema_lsp.runs.slash import read_commands
from rhema_lsp.runs.turn import Turns

__all__ = ["CUSTOM_COMMANDS", "custom_prompts", "extensions_status", "typed_command"]

CUSTOM_COMMANDS = "rhema:commands"
"""The pseudo-server the custom commands are listed under in ``rhema.mcpPrompts``."""

_WORDS = "arguments"


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


async def custom_prompts(turns: Turns, roots: Sequence[Path]) -> list[McpPromptInfo]:
    """The custom commands and skills of ``roots`` as ``rhema.mcpPrompts``
    entries (each name once, the first folder's)."""
    listed: dict[str, McpPromptInfo] = {}
    for folder in roots:
        commands = await read_commands(folder, turns.mcp.config_path)
        for command in commands.commands:
            hint = command.hint or "words after the command (optional)"
            listed.setdefault(
                command.name,
                McpPromptInfo(
                    server=CUSTOM_COMMANDS,
                    name=command.name,
                    title="",
                    description=command.description,
                    arguments=[McpPromptArgument(name=_WORDS, description=hint, required=False)],
                    command=command.name,
                ),
            )
    return list(listed.values())


def typed_command(name: str, arguments: dict[str, str]) -> str:
    """What the user typed for custom command ``name`` with ``arguments``."""
    return f"/{name} {arguments.get(_WORDS, '')}".strip()
