"""What a run offers the model from its MCP servers: tools, resource tools,
and the servers' instructions.

- Each ready server's tools become ``<server>__<tool>`` with a wire-safe
  schema (:mod:`rhema_lsp.mcp.schemas`); a name already taken (by a
  built-in tool, or an earlier server) is skipped with a warning. A
  restarting server's tools are its last session's: they stay offered while
  it restarts, and a call waits for it, bounded.
- When a ready server declares resources, ``list_mcp_resources {server?}``
  and ``read_mcp_resource {server, uri}`` are offered (a resource link in a
  result names the server, so the model can follow it).
- :func:`instructions` joins the servers' own ``instructions`` for the
  system prompt, each marked as that server's words and capped
  (:data:`INSTRUCTIONS_CHARS` each, :data:`INSTRUCTIONS_TOTAL` in all).
- Many tools: a request never carries more than :data:`MAX_TOOLS` (OpenAI's
  limit, kept on every wire). When the MCP tools would pass it, or their
  schemas would take more than :data:`DEFER_SHARE` of the model's window,
  they are *deferred* (:func:`deferring`): the request carries
  ``find_tools {query}`` instead, which :func:`search` answers and whose
  matches the next request carries (as Claude Code does past a tenth of the
  window).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.mcp.schemas import exposed_name, sanitize_schema

if TYPE_CHECKING:
    from rhema_lsp.mcp.connection import McpConnection
    from rhema_lsp.mcp.listings import McpTool

__all__ = [
    "FIND_TOOLS",
    "INSTRUCTIONS_CHARS",
    "INSTRUCTIONS_TOTAL",
    "LIST_RESOURCES",
    "MAX_TOOLS",
    "READ_RESOURCE",
    "OfferedTool",
    "RunServer",
    "deferring",
    "find_spec",
    "instructions",
    "offer",
    "resource_specs",
    "search",
]

logger = logging.getLogger(__name__)

READ_RESOURCE = "read_mcp_resource"
LIST_RESOURCES = "list_mcp_resources"
INSTRUCTIONS_CHARS = 2000
INSTRUCTIONS_TOTAL = 8000
DESCRIPTION_CHARS = 2000
MAX_TOOLS = 128
"""The most tools one request carries (OpenAI refuses more)."""
DEFER_SHARE = 0.1
"""The share of the model's window the MCP tools' schemas may take before
they are deferred behind ``find_tools``."""
DEFAULT_WINDOW = 128_000
"""The window assumed when the model's is not known."""
FIND_TOOLS = "find_tools"
FOUND_PER_QUERY = 10
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class RunServer:
    """A server as a run uses it: its configured name and its connection."""

    name: str
    connection: McpConnection

    @property
    def ready(self) -> bool:
        """Whether it can be called now."""
        return self.connection.state.value == "ready"

    @property
    def tools(self) -> list[McpTool]:
        """The tools to offer: a ready server's; a restarting server's last
        session's (a call waits for the restart, bounded); none otherwise."""
        state = self.connection.state.value
        if state == "ready":
            return self.connection.tools
        return self.connection.offers.kept if state == "restarting" else []


@dataclass(frozen=True, slots=True)
class OfferedTool:
    """An MCP tool as offered to the model."""

    spec: ToolSpec
    server: str
    tool: str
    connection: McpConnection


def offer(servers: Sequence[RunServer], taken: set[str], wire: str) -> list[OfferedTool]:
    """The tools of the ready (or restarting) ``servers``, under names not in ``taken``."""
    taken = set(taken)
    offered = []
    for server in servers:
        for tool in server.tools:
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


def deferring(offered: Sequence[OfferedTool], others: int, window: int | None) -> bool:
    """Whether the MCP tools go behind ``find_tools``: with the ``others``
    the request carries they would pass :data:`MAX_TOOLS`, or their schemas
    (about four characters a token) would take more than :data:`DEFER_SHARE`
    of ``window``."""
    if others + len(offered) > MAX_TOOLS:
        return True
    size = sum(len(tool.spec.model_dump_json()) for tool in offered) / 4
    return size > DEFER_SHARE * (window or DEFAULT_WINDOW)


def find_spec(offered: Sequence[OfferedTool]) -> ToolSpec:
    """``find_tools``, its description naming what it finds among."""
    counts: dict[str, int] = {}
    for tool in offered:
        counts[tool.server] = counts.get(tool.server, 0) + 1
    servers = ", ".join(f"{name} ({count})" for name, count in counts.items())
    return ToolSpec(
        name=FIND_TOOLS,
        description=(
            f"{len(offered)} more tools of MCP servers are available but not loaded: "
            f"{servers}. Search them by what you need (words of their names and "
            "descriptions, or `select:NAME,NAME` for exact names); the matching tools "
            "are loaded into your next request, where you can call them."
        ),
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What the tool should do."}},
            "required": ["query"],
        },
    )


def search(
    offered: Sequence[OfferedTool], query: str, limit: int = FOUND_PER_QUERY
) -> list[OfferedTool]:
    """The tools matching ``query``, best first: ``select:a,b`` by exact
    (exposed or own) name, else by the words of the query found in a tool's
    name (weighing most), server or description."""
    if query.strip().lower().startswith("select:"):
        wanted = {name.strip() for name in query.split(":", 1)[1].split(",") if name.strip()}
        return [t for t in offered if t.spec.name in wanted or t.tool in wanted][:limit]
    words = set(_WORD.findall(query.lower()))
    scored = []
    for index, tool in enumerate(offered):
        name = set(_WORD.findall(tool.spec.name.lower()))
        text = set(_WORD.findall(tool.spec.description.lower()))
        score = 3 * len(words & name) + len(words & text)
        if score:
            scored.append((-score, index, tool))
    return [tool for _, _, tool in sorted(scored)[:limit]]


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
