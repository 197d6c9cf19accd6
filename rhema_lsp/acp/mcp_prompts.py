"""MCP servers started as an ACP session opens, and their prompts offered
as slash commands.

When a session opens (``session/new``, ``load``, ``resume``, ``fork``) the
agent starts its MCP servers in a task it owns, rather than on its first
prompt: the ones a run would start (the settings', the user config file's,
the trusted workspace ones, and the servers the client passed), through the
hub's own path (:meth:`~rhema_lsp.mcp.hub.McpHub.resolver`, its one bounded
wait), whatever the session's mode. It asks the user nothing: a workspace
``.mcp.json`` not answered yet leaves the start to the first prompt, which
asks as before. A prompt sent meanwhile waits for them
as it always did (bounded as before); one in a mode without MCP tools does
not use them.

Once they answered, every ready server's prompts are offered to every open
session as ``mcp__<server>__<prompt>`` (the names the language server gives
them, ``rhema.mcpPrompts``) in a new ``available_commands_update``, the
input hint naming the prompt's arguments. Typed,
``/mcp__server__prompt words…`` is an ordinary turn whose prompt is the
server's text (``prompts/get``), the title staying as typed: ``name=value``
words fill the arguments they name, the other words fill the rest in order,
the last one taking what is left. A prompt of a server no longer ready, or
one the server refuses (a missing required argument), fails the prompt with
-32602 naming it.

Every task is owned: :meth:`McpPromptCommands.aclose` cancels them (the
agent's shutdown), and a failure to start is the hub's to report (its
status, the log), never the session's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from rhema_lsp.acp.errors import BadParams
from rhema_lsp.acp.sessions import AcpSession
from rhema_lsp.engine import ToolCall, ToolContext, ToolResolver, ToolResult, ToolSpec
from rhema_lsp.mcp.errors import McpError, McpUnavailable
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.runs.settings import Settings
from rhema_lsp.tools.editor import Editor, EditOutcome, OpenDocument

if TYPE_CHECKING:  # the listings load the MCP SDK: seconds, never on the agent's load
    from lsprotocol.types import WorkspaceEdit

    from rhema_lsp.mcp.listings import McpPrompt

__all__ = ["McpPromptCommands", "command_name", "prompt_arguments"]

logger = logging.getLogger(__name__)

PREFIX = "mcp__"


def command_name(server: str, prompt: str) -> str:
    """The slash command of ``server``'s ``prompt``."""
    return f"{PREFIX}{server}__{prompt}"


def prompt_arguments(prompt: McpPrompt, words: str) -> dict[str, str]:
    """The arguments of ``prompt`` from what the user typed after the
    command (see the module docstring)."""
    names = [argument.name for argument in prompt.arguments]
    given: dict[str, str] = {}
    rest: list[str] = []
    for word in words.split():
        name, sep, value = word.partition("=")
        if sep and name in names and name not in given:
            given[name] = value
        else:
            rest.append(word)
    free = [name for name in names if name not in given]
    for index, name in enumerate(free):
        if index >= len(rest):
            break
        given[name] = " ".join(rest[index:]) if index == len(free) - 1 else rest[index]
    return given


class _NoTools(ToolResolver):
    """The empty tool set the servers are started against (no run)."""

    def specs(self) -> list[ToolSpec]:
        return []

    async def resolve(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        raise AssertionError("no run resolves calls here")


class _Unasked:
    """The session's editor, but one that asks nothing: a question (whether
    to trust a workspace's ``.mcp.json``) is the first prompt's to ask, so
    the early start gives up rather than asks (or caches a dismissal)."""

    def __init__(self, editor: Editor) -> None:
        self.editor = editor

    @property
    def position_encoding(self) -> str:
        return self.editor.position_encoding

    @property
    def supports_document_changes(self) -> bool:
        return self.editor.supports_document_changes

    @property
    def supports_resource_operations(self) -> bool:
        return self.editor.supports_resource_operations

    @property
    def supports_change_annotations(self) -> bool:
        return self.editor.supports_change_annotations

    def open_document(self, uri: str) -> OpenDocument | None:
        return self.editor.open_document(uri)

    def open_documents(self) -> list[OpenDocument]:
        return self.editor.open_documents()

    async def apply_edit(
        self, edit: WorkspaceEdit, label: str, expected: Mapping[str, str | None]
    ) -> EditOutcome:
        return await self.editor.apply_edit(edit, label, expected)

    async def confirm(self, message: str, choices: Sequence[str]) -> str | None:
        raise McpUnavailable("a question waits for the first prompt")


class McpPromptCommands:
    """The servers started early, and their prompts (see the module docstring).

    Parameters
    ----------
    hub
        The agent's MCP servers.
    settings
        The agent's settings as they are now.
    """

    def __init__(self, hub: McpHub, settings: Callable[[], Settings]) -> None:
        self.hub = hub
        self.settings = settings
        self.listed: list[tuple[str, McpPrompt]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, session: AcpSession, announce: Callable[[], Awaitable[None]]) -> None:
        """Start ``session``'s servers now; ``announce`` once their prompts
        changed what is offered."""
        task = asyncio.get_running_loop().create_task(
            self._start(session, announce), name=f"rhema acp mcp start {session.id}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _start(self, session: AcpSession, announce: Callable[[], Awaitable[None]]) -> None:
        settings = self.settings()
        if not settings.mcp_modes:
            return
        try:
            await self.hub.resolver(
                _NoTools(),
                settings.mcp_modes[0],
                session.cwd,
                _Unasked(session.editor),
                "openai",
                settings,
                session.mcp_servers,
            )
            listed = await self.hub.prompts(settings)
        except McpError as exc:  # the hub reports its servers itself
            logger.info("MCP servers of session %s not started early: %s", session.id, exc)
            return
        if listed != self.listed:
            self.listed = listed
            await announce()

    def offered(self) -> list[AvailableCommand]:
        """The prompts as ACP's commands."""
        commands = []
        for server, prompt in self.listed:
            names = " ".join(a.name if a.required else f"[{a.name}]" for a in prompt.arguments)
            hint = (
                AvailableCommandInput(root=UnstructuredCommandInput(hint=names)) if names else None
            )
            commands.append(
                AvailableCommand(
                    name=command_name(server, prompt.name),
                    description=prompt.description or prompt.title or f"{server}'s prompt",
                    input=hint,
                )
            )
        return commands

    async def expand(self, text: str) -> str | None:
        """The server's prompt text when ``text`` names one of the prompts
        offered; ``None`` otherwise.

        Raises
        ------
        BadParams
            The server is not ready, or it refused (the message says why).
        """
        if not text.startswith(f"/{PREFIX}"):
            return None
        typed, _, words = text[1:].partition(" ")
        for server, prompt in self.listed:
            if command_name(server, prompt.name) == typed.strip():
                arguments = prompt_arguments(prompt, words)
                try:
                    return await self.hub.get_prompt(server, prompt.name, arguments)
                except McpError as exc:
                    raise BadParams(f"/{typed}: {exc}") from exc
        return None

    async def aclose(self) -> None:
        """Cancel every start still running."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
