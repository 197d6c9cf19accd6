"""``rhema.status``: the version, the provider and where it came from, the
folders, the mode, the running sessions, the MCP servers, the project rules
of each folder, the agent's own language servers and the command sandbox."""

from __future__ import annotations

from dataclasses import asdict

import anyio.to_thread

from rhema_lsp import __version__
from rhema_lsp.contract import (
    STATUS,
    CompletionStatus,
    LanguageServerStatus,
    McpServerStatus,
    ProviderSetup,
    ProviderStatus,
    RulesStatus,
    StatusArgs,
    StatusResult,
)
from rhema_lsp.engine import ProviderError
from rhema_lsp.providers import survey_setup
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.workplace import command_policy
from rhema_lsp.server.extensions import extensions_status
from rhema_lsp.server.router import Request, Service, serves

__all__: list[str] = []


@serves(STATUS)
async def status(service: Service, args: StatusArgs, request: Request) -> StatusResult:
    state = service.state
    settings = state.settings
    try:
        resolved = await state.provider()
        provider = ProviderStatus(
            name=resolved.name,
            model=resolved.model,
            base_url=resolved.base_url,
            source=resolved.source,
            context_window=settings.context_window or resolved.context_window,
        )
    except ProviderError as exc:
        provider = ProviderStatus(name=None, model=None, base_url=None, source=None, error=str(exc))
    roots = state.folders.roots()
    rules = [
        RulesStatus(
            folder=str(folder),
            path=found.shown,
            scope=found.scope,
            bytes=found.size,
            truncated=found.truncated,
            refused=found.refused,
        )
        for folder in roots
        for found in await state.turns.rules_in_use(folder, roots, state.editor)
    ]
    configured = bool(settings.provider or settings.base_url)
    setup = await survey_setup(configured=configured)
    languages = await anyio.to_thread.run_sync(state.languages.status)
    sandbox = await anyio.to_thread.run_sync(command_policy(settings).status)
    return StatusResult(
        version=__version__,
        provider=provider,
        setup=ProviderSetup.model_validate(asdict(setup)),
        folders=[str(root) for root in roots],
        mode=settings.mode,
        running=state.runs.sessions(),
        mcp_servers=[
            McpServerStatus.model_validate(asdict(report))
            for report in await state.mcp.status(
                settings, check=args.check, sign_in=args.sign_in, editor=state.editor
            )
        ],
        rules=rules,
        extensions=await extensions_status(state.turns, roots),
        language_servers=[
            LanguageServerStatus.model_validate({**asdict(entry), "command": list(entry.command)})
            for entry in languages
        ],
        completion=_completion(settings, provider),
        language_answers=state.language_answers(),
        sandbox=sandbox,
    )


def _completion(settings: Settings, chat: ProviderStatus) -> CompletionStatus:
    """The completion model: its own settings, else the chat's provider."""
    if settings.completion_provider or settings.completion_base_url:
        return CompletionStatus(
            enabled=settings.inline_completion,
            provider=settings.completion_provider or "custom",
            model=settings.completion_model,
            base_url=settings.completion_base_url,
        )
    return CompletionStatus(
        enabled=settings.inline_completion,
        provider=chat.name,
        model=settings.completion_model or chat.model,
        base_url=chat.base_url,
    )
