"""Commands on the MCP servers: ``rhema.mcpRestart``, ``rhema.mcpPrompts``,
``rhema.mcpPrompt``, ``rhema.mcpResources``."""

from __future__ import annotations

from dataclasses import asdict

from rhema_lsp.contract import (
    MCP_PROMPT,
    MCP_PROMPTS,
    MCP_RESOURCES,
    MCP_RESTART,
    McpPromptArgs,
    McpPromptArgument,
    McpPromptInfo,
    McpPromptResult,
    McpPromptsArgs,
    McpResourceFailure,
    McpResourceInfo,
    McpResourcesArgs,
    McpResourcesResult,
    McpRestartArgs,
    McpServerStatus,
)
from rhema_lsp.mcp import McpError
from rhema_lsp.server.errors import BadArguments, CommandFailed
from rhema_lsp.server.extensions import CUSTOM_COMMANDS, custom_prompts, typed_command
from rhema_lsp.server.router import Request, Service, serves

__all__: list[str] = []

MCP_RESOURCES_MAX = 500
"""The most resources ``rhema.mcpResources`` answers with (of all servers)."""


@serves(MCP_RESTART)
async def mcp_restart(
    service: Service, args: McpRestartArgs, request: Request
) -> list[McpServerStatus]:
    state = service.state
    reports = await state.mcp.restart(args.name, state.settings, editor=state.editor)
    if not reports:
        raise BadArguments(f"`name`: no MCP server named {args.name!r} is configured")
    return [McpServerStatus.model_validate(asdict(report)) for report in reports]


@serves(MCP_PROMPTS)
async def mcp_prompts(
    service: Service, args: McpPromptsArgs, request: Request
) -> list[McpPromptInfo]:
    state = service.state
    listed = await state.mcp.prompts(state.settings, editor=state.editor)
    return [
        McpPromptInfo(
            server=server,
            name=prompt.name,
            title=prompt.title,
            description=prompt.description,
            arguments=[McpPromptArgument.model_validate(asdict(a)) for a in prompt.arguments],
            command=f"mcp__{server}__{prompt.name}",
        )
        for server, prompt in listed
    ] + await custom_prompts(state.turns, state.folders.roots())


@serves(MCP_PROMPT)
async def mcp_prompt(service: Service, args: McpPromptArgs, request: Request) -> McpPromptResult:
    if args.server == CUSTOM_COMMANDS:  # expanded once, when it is sent as a turn
        return McpPromptResult(text=typed_command(args.name, args.arguments))
    try:
        text = await service.state.mcp.get_prompt(args.server, args.name, args.arguments)
    except McpError as exc:
        raise CommandFailed(str(exc)) from exc
    return McpPromptResult(text=text)


@serves(MCP_RESOURCES)
async def mcp_resources(
    service: Service, args: McpResourcesArgs, request: Request
) -> McpResourcesResult:
    state = service.state
    listed, failed = await state.mcp.resources(state.settings, editor=state.editor)
    return McpResourcesResult(
        resources=[
            McpResourceInfo(
                server=server, uri=resource.uri, name=resource.name, mime_type=resource.mime_type
            )
            for server, resource in listed[:MCP_RESOURCES_MAX]
        ],
        failed=[McpResourceFailure(server=server, error=error) for server, error in failed],
        truncated=len(listed) > MCP_RESOURCES_MAX,
    )
