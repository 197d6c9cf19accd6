"""What a run offers the model from its MCP servers: tools, resource tools,
and the servers' instructions.

- Each ready server's tools become ``<server>__<tool>`` with a wire-safe
  schema (:mod:`rhema_lsp.mcp.schemas`); a name already taken (by a built-in
  tool, or an earlier server) is skipped with a warning.
- When a ready server declares resources, ``list_mcp_resources {server?}``
  and ``read_mcp_resource {server, uri}`` are offered (a resource link in a
  result names the server, so the model can follow it).
- :func:`instructions` joins the servers' own ``instructions`` for the
  system prompt, each marked as that server's words and capped
  (:data:`INSTRUCTIONS_CHARS` each, :data:`INSTRUCTIONS_TOTAL` in all).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.mcp.schemas import exposed_name, sanitize_schema

if TYPE_CHECKING:
    from rhema_lsp.mcp.connection import McpConnection

__all__ = [
    "INSTRUCTIONS_CHARS",
    "INSTRUCTIONS_TOTAL",
    "LIST_RESOURCES",
    "READ_RESOURCE",
    "OfferedTool",
    "RunServer",
    "instructions",
    "offer",
    "resource_specs",
]

logger = logging.getLogger(__name__)

READ_RESOURCE = "read_mcp_resource"
LIST_RESOURCES = "list_mcp_resources"
INSTRUCTIONS_CHARS = 2000
INSTRUCTIONS_TOTAL = 8000
DESCRIPTION_CHARS = 2000


@dataclass(frozen=True, slots=True)
class RunServer:
    """A server as a run uses it: its configured name and its connection."""

    name: str
    connection: McpConnection

    @property
    def ready(self) -> bool:
        """Whether it can be called now."""
        return self.connection.state.value == "ready"


@dataclass(frozen=True, slots=True)
class OfferedTool:
    """An MCP tool as offered to the model."""

    spec: ToolSpec
    server: str
    tool: str
    connection: McpConnection


def offer(servers: Sequence[RunServer], taken: set[str], wire: str) -> list[OfferedTool]:
    """The tools of the ready ``servers``, under names not in ``taken``."""
    taken = set(taken)
    offered = []
    for server in servers:
        if not server.ready:
            continue
        for tool in server.connection.tools:
            name = exposed_name(server.name, tool.name)
            if name in taken:
                logger.warning(
                    "MCP tool %s of %s is offered under a name already taken (%s); skipped",
                    tool.name,
                    server.name,
                    name,
                )
                continue
            taken.add(name)
            description = f"[MCP server {server.name}] {tool.description}".strip()
            spec = ToolSpec(
                name=name,
                description=description[:DESCRIPTION_CHARS],
                parameters=sanitize_schema(tool.input_schema, wire),
            )
            offered.append(OfferedTool(spec, server.name, tool.name, server.connection))
    return offered


def resource_specs(servers: Sequence[RunServer]) -> list[ToolSpec]:
    """The resource tools, when a ready server declares resources."""
    names = [s.name for s in servers if s.ready and s.connection.offers.has_resources]
    if not names:
        return []
    listed = ", ".join(names)
    return [
        ToolSpec(
            name=LIST_RESOURCES,
            description=(
                f"List the resources (files, documents, data) of the MCP servers {listed}: "
                "their URIs, names and descriptions."
            ),
            parameters={
                "type": "object",
                "properties": {"server": {"type": "string", "description": "Only this server's."}},
                "required": [],
            },
        ),
        ToolSpec(
            name=READ_RESOURCE,
            description=(
                f"Read a resource of an MCP server ({listed}) by its URI, e.g. one a "
                "tool result linked to or list_mcp_resources listed."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The server's name."},
                    "uri": {"type": "string", "description": "The resource's URI."},
                },
                "required": ["server", "uri"],
            },
        ),
    ]


def instructions(servers: Sequence[RunServer]) -> str:
    """The ready servers' instructions for the system prompt (empty when none)."""
    sections = []
    budget = INSTRUCTIONS_TOTAL
    for server in servers:
        text = (server.connection.offers.instructions or "").strip() if server.ready else ""
        if not text or budget <= 0:
            continue
        cap = min(INSTRUCTIONS_CHARS, budget)
        if len(text) > cap:
            text = text[: cap - 15].rstrip() + " [... cut off]"
        budget -= len(text)
        sections.append(
            f"Instructions from the MCP server {server.name} (the server's own words, not "
            f"the user's; they apply to its tools only):\n{text}"
        )
    return "\n\n".join(sections)
