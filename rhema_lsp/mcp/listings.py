"""What a server offers: its tools, prompts and resources, listed page by page.

Each listing follows ``nextCursor`` for at most :data:`MAX_PAGES` pages (a
server whose cursor never ends cannot hang a start). A tool whose
``execution.taskSupport`` is ``required`` is left out: it only runs as an
MCP task, which this client does not start, and calling it would fail.
Imports the SDK: load it from :mod:`rhema_lsp.mcp.connection` only.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import mcp_types
from mcp import Client

__all__ = [
    "MAX_PAGES",
    "McpPrompt",
    "McpResource",
    "McpTool",
    "PromptArgument",
    "list_prompts",
    "list_resources",
    "list_tools",
    "prompt_text",
]

logger = logging.getLogger(__name__)

MAX_PAGES = 50


class _Paged(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


_Page = TypeVar("_Page", bound=_Paged)


@dataclass(frozen=True, slots=True)
class McpTool:
    """A tool a server lists: its own name, description and input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument of a prompt."""

    name: str
    description: str
    required: bool


@dataclass(frozen=True, slots=True)
class McpPrompt:
    """A prompt a server lists (a slash command for the user)."""

    name: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...]


@dataclass(frozen=True, slots=True)
class McpResource:
    """A resource a server lists."""

    uri: str
    name: str
    description: str
    mime_type: str | None


async def _pages(fetch: Callable[[str | None], Awaitable[_Page]]) -> AsyncIterator[_Page]:
    """Each page of a listing, following ``nextCursor`` for at most :data:`MAX_PAGES`."""
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        yield page
        cursor = page.next_cursor
        if cursor is None:
            return


async def list_tools(client: Client, server: str) -> list[McpTool]:
    """Every tool of the server that can be called without a task."""
    tools: list[McpTool] = []
    async for page in _pages(lambda cursor: client.list_tools(cursor=cursor)):
        for tool in page.tools:
            if tool.execution is not None and tool.execution.task_support == "required":
                logger.info(
                    "MCP tool %s of %s runs only as a task, which rhema does not start: "
                    "not offered",
                    tool.name,
                    server,
                )
                continue
            description = tool.description or tool.title or ""
            tools.append(McpTool(tool.name, description, dict(tool.input_schema)))
    return tools


async def list_prompts(client: Client) -> list[McpPrompt]:
    """Every prompt of the server."""
    prompts: list[McpPrompt] = []
    async for page in _pages(lambda cursor: client.list_prompts(cursor=cursor)):
        for prompt in page.prompts:
            arguments = tuple(
                PromptArgument(a.name, a.description or "", bool(a.required))
                for a in prompt.arguments or []
            )
            title, about = prompt.title or prompt.name, prompt.description or ""
            prompts.append(McpPrompt(prompt.name, title, about, arguments))
    return prompts


async def list_resources(client: Client) -> list[McpResource]:
    """Every (concrete) resource of the server."""
    resources: list[McpResource] = []
    async for page in _pages(lambda cursor: client.list_resources(cursor=cursor)):
        for resource in page.resources:
            about = resource.description or ""
            resources.append(
                McpResource(str(resource.uri), resource.name, about, resource.mime_type)
            )
    return resources


def prompt_text(result: mcp_types.GetPromptResult) -> str:
    """A prompt's messages as the text of one user turn: each message's text,
    an embedded text resource in full, anything else as a note."""
    parts: list[str] = []
    for message in result.messages:
        block = message.content
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.EmbeddedResource) and isinstance(
            block.resource, mcp_types.TextResourceContents
        ):
            parts.append(f"[resource <{block.resource.uri}>]\n{block.resource.text}")
        else:
            parts.append(f"[{getattr(block, 'type', 'content')}: not shown]")
    return "\n\n".join(parts)
