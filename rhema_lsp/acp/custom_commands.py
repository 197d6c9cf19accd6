"""The user's own slash commands and skills in ACP's ``available_commands_update``.

The built-in commands (:mod:`~rhema_lsp.acp.builtin_commands`) are the
connection's; custom commands and skills (:mod:`~rhema_lsp.runs.slash`) are
a folder's, read again each time a session of it is announced (new, loaded,
resumed), so a command added since shows up on the next session. A built-in
command keeps its name: a custom one of the same name is not offered. Typed,
a custom command is an ordinary prompt the door kit expands
(:meth:`~rhema_lsp.runs.door.Door.expand`), the same as over LSP.
"""

from __future__ import annotations

from typing import Any, Protocol

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)

from rhema_lsp.acp.commands import SlashCommands, update_message
from rhema_lsp.acp.mcp_prompts import McpPromptCommands
from rhema_lsp.acp.sessions import AcpSession
from rhema_lsp.runs.door import Door
from rhema_lsp.runs.slash import Command, read_commands

__all__ = ["offered", "offered_message"]


class _Agent(Protocol):
    """The agent as far as its listing goes: its built-in commands, its door."""

    @property
    def commands(self) -> SlashCommands: ...

    @property
    def door(self) -> Door[Any, Any]: ...

    @property
    def mcp_prompts(self) -> McpPromptCommands: ...


def _listed(command: Command) -> AvailableCommand:
    hint = None
    if command.hint or not command.skill:
        text = command.hint or "arguments (optional)"
        hint = AvailableCommandInput(root=UnstructuredCommandInput(hint=text))
    return AvailableCommand(name=command.name, description=command.description, input=hint)


async def offered(agent: _Agent, session: AcpSession) -> AvailableCommandsUpdate:
    """The ``available_commands_update`` of ``session``: the agent's built-in
    commands, then the session folder's and the user's own, by name, then
    the MCP servers' prompts."""
    door = agent.door
    found = await read_commands(session.cwd, door.mcp.config_path)
    door.turns.skills.report(found.problems)
    own = agent.commands.offered()
    names = {command.name for command in own}
    extra = [_listed(command) for command in found.commands if command.name not in names]
    prompts = agent.mcp_prompts.offered()  # the MCP servers' prompts (acp/mcp_prompts.py)
    return AvailableCommandsUpdate(
        session_update="available_commands_update", available_commands=[*own, *extra, *prompts]
    )


async def offered_message(agent: _Agent, session: AcpSession) -> dict[str, Any]:
    """:func:`offered` as the JSON-RPC notification the SDK would send (for
    a new session's, sent right after its answer)."""
    return update_message(session.id, await offered(agent, session))
