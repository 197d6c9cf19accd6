"""Slash commands: what the agent can do besides a model turn, as ACP
clients offer them (``available_commands_update``) and the user types them.

A prompt whose text starts with ``/name`` naming a command here runs the
command instead of a model turn: its answer goes out as
``agent_message_chunk`` updates and the prompt ends ``end_turn``; nothing of
it joins the conversation. Any other text starting with ``/`` is an
ordinary prompt (a path, say). The built-in commands map to what the
agent already has, under the same rules as over LSP:

- ``/status``: the session's folder, mode, model, thinking level, turns;
- ``/compact``: compact the conversation now (the pipeline's compaction,
  under the session's lease; its ``usage_update`` follows);
- ``/rewind N``: files and conversation back to before turn ``N``;
- ``/undo``: the files of the last turn back as they were.

Others register theirs (``/plan``, an MCP server's prompts) with
:meth:`SlashCommands.add`: a command is a name, a description, an input
hint and an async function from the session and the argument text to the
answer. A command's failure is its answer (``⚠`` and why), never the
prompt's error, unless the session is busy.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from acp.meta import CLIENT_METHODS
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    SessionNotification,
    UnstructuredCommandInput,
)

from rhema_lsp.acp.sessions import AcpSession

__all__ = ["CommandAction", "SlashCommand", "SlashCommands", "parse_command", "update_message"]

CommandAction = Callable[[AcpSession, str], Awaitable[str]]
"""Runs a command on a session with the text after its name; the answer."""

_COMMAND = re.compile(r"^\s*/([A-Za-z][\w.-]*)(?:\s+(.*))?\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One command: its name (without ``/``), what it does, what it takes."""

    name: str
    description: str
    run: CommandAction
    hint: str | None = None

    def offered(self) -> AvailableCommand:
        """The command as ``available_commands_update`` lists it."""
        hint = None
        if self.hint is not None:
            hint = AvailableCommandInput(root=UnstructuredCommandInput(hint=self.hint))
        return AvailableCommand(name=self.name, description=self.description, input=hint)


def update_message(session_id: str, update: AvailableCommandsUpdate) -> dict[str, Any]:
    """``update`` about ``session_id`` as the JSON-RPC notification the SDK
    would send (for :meth:`~rhema_lsp.acp.transport.LineTransport.after_answer`)."""
    notice = SessionNotification(session_id=session_id, update=update)
    return {
        "jsonrpc": "2.0",
        "method": CLIENT_METHODS["session_update"],
        "params": notice.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


def parse_command(text: str) -> tuple[str, str] | None:
    """``(name, argument)`` when ``text`` is ``/name`` with an optional
    argument, else ``None``."""
    match = _COMMAND.match(text)
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()


class SlashCommands:
    """The commands sessions offer, in the order added."""

    def __init__(self) -> None:
        self._commands: dict[str, SlashCommand] = {}

    def add(self, command: SlashCommand) -> None:
        """Offer ``command`` (the hook for ``/plan`` and MCP prompts); a
        later one of the same name replaces it."""
        self._commands[command.name] = command

    def offered(self) -> list[AvailableCommand]:
        """Every command, as ``available_commands_update`` lists them."""
        return [command.offered() for command in self._commands.values()]

    def update(self) -> AvailableCommandsUpdate:
        """The ``available_commands_update`` listing them."""
        return AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=self.offered()
        )

    def match(self, text: str) -> tuple[SlashCommand, str] | None:
        """The command ``text`` runs, with its argument; ``None``: a prompt."""
        parsed = parse_command(text)
        if parsed is None or parsed[0] not in self._commands:
            return None
        return self._commands[parsed[0]], parsed[1]
