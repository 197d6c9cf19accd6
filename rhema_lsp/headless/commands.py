"""The headless commands that run one contract command and print it:
``rhema-lsp sessions``, ``rhema-lsp rewind`` (files written on disk
atomically, as every headless edit) and ``rhema-lsp status``."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from rhema_lsp.contract import (
    REWIND,
    SESSIONS,
    STATUS,
    RewindArgs,
    RewindResult,
    SessionsArgs,
    SessionSummary,
    StatusArgs,
    StatusResult,
)
from rhema_lsp.headless.connection import ClientOptions, one_command, stderr_note
from rhema_lsp.headless.errors import Exit, UsageError
from rhema_lsp.tools.positions import path_to_uri, uri_to_path
from rhema_lsp.vocabulary import RewindWhat

__all__ = ["NoProvider", "RewindRequest", "rewind", "sessions", "status"]


async def sessions(options: ClientOptions, as_json: bool) -> int:
    """List the folder's sessions, most recent first."""
    listed: list[SessionSummary] = await one_command(
        options, SESSIONS, SessionsArgs(folder=str(options.folder))
    )
    if as_json:
        print(json.dumps([item.wire() for item in listed], ensure_ascii=False, indent=2))
    elif not listed:
        print(f"no sessions in {options.folder}")
    for item in [] if as_json else listed:
        running = " (running)" if item.running else ""
        print(
            f"{item.session}  {item.updated_at[:19]}  {item.turns:>3} turn(s)  "
            f"{item.title}{running}"
        )
    return Exit.OK


@dataclass(frozen=True, slots=True)
class RewindRequest:
    """``rhema-lsp rewind``: which session, to before which turn, what;
    ``paths`` (relative to the folder, or absolute): those files only."""

    session: str
    turn: int
    what: RewindWhat = "both"
    force: bool = False
    paths: tuple[Path, ...] = ()


async def rewind(options: ClientOptions, request: RewindRequest, as_json: bool) -> int:
    """Rewind a session through the server, files written on disk atomically;
    exit 1 when a file was left alone."""
    if request.turn < 1:
        raise UsageError(f"--turn {request.turn}: turns count from 1")
    if request.paths and request.what != "code":
        raise UsageError(f"--path restores files only: it does not go with --{request.what}")
    args = RewindArgs(
        session=request.session,
        turn=request.turn,
        what=request.what,
        force=request.force,
        paths=_file_uris(options.folder, request.paths),
    )
    result: RewindResult = await one_command(options, REWIND, args)
    if as_json:
        print(json.dumps(result.wire(), ensure_ascii=False, indent=2))
    else:
        for uri in result.restored:
            print(f"restored  {_shown(options.folder, uri)}")
        for conflict in result.conflicts:
            print(f"conflict  {_shown(options.folder, conflict.uri)}: {conflict.reason}")
        if result.messages is not None:
            print(f"conversation: {result.messages} message(s) kept, before turn {request.turn}")
    if result.conflicts:
        stderr_note(
            f"rhema-lsp: {len(result.conflicts)} file(s) changed since were left alone; "
            "--force overwrites them"
        )
        return Exit.FAILED
    return Exit.OK


def _file_uris(folder: Path, paths: tuple[Path, ...]) -> list[str] | None:
    """The ``file://`` URIs of ``paths`` (relative to ``folder`` or absolute), normalised
    (the server refuses what lies outside the workspace); ``None`` for none."""
    return [path_to_uri(Path(os.path.normpath(folder / path))) for path in paths] or None


def _shown(folder: Path, uri: str) -> str:
    path = uri_to_path(uri)
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class NoProvider:
    """No provider is set up, in the command line's words: ``error`` (one
    line, for ``--json``) and ``advice`` (what to do, one choice a line)."""

    error: str
    advice: str


async def status(
    options: ClientOptions, as_json: bool, mode_note: str, no_provider: NoProvider | None = None
) -> int:
    """Print the provider (``options.provider_note``, or what to do when
    ``no_provider``), the server's version and folders, the mode ``ask`` runs
    in (``mode_note``), the MCP servers, the project rules and the language
    servers: all of it whether a provider is set up or not (exit 2 when
    none is, 1 when the server could not resolve it)."""
    result: StatusResult = await one_command(options, STATUS, StatusArgs(check=True, sign_in=True))
    provider = result.provider
    if no_provider is not None:
        provider = provider.model_copy(update={"error": no_provider.error, "source": None})
    exit_code = Exit.USAGE if no_provider else Exit.FAILED if provider.error else Exit.OK
    if as_json:
        source = None if provider.error else options.provider_note
        shown = result.model_copy(
            update={"provider": provider.model_copy(update={"source": source})}
        )
        print(json.dumps(shown.wire(), ensure_ascii=False, indent=2))
        return exit_code
    print(f"rhema-lsp {result.version}")
    if no_provider is not None:
        print(f"provider: none — {no_provider.advice}")
    elif provider.error:
        print(f"provider: none — {provider.error}")
    else:
        where = provider.base_url or "in process"
        print(f"provider: {provider.name} · model {provider.model} · {where}")
        print(f"source:   {options.provider_note}")
    print(f"folders:  {', '.join(result.folders)}")
    print(f"mode:     {mode_note}")
    if result.completion is not None:
        completion = result.completion
        what = f"model {completion.model} ({completion.provider})" if completion.model else "none"
        print(f"complete: {what}" if completion.enabled else "complete: off")
    servers = result.mcp_servers
    print(f"mcp:      {len(servers)} server(s)" if servers else "mcp:      no servers configured")
    for server in servers:
        error = f" — {server.error}" if server.error else ""
        deferred = " (behind find_tools)" if server.deferred else ""
        print(
            f"  {server.name} ({server.transport}, {server.source}): "
            f"{server.state}, {server.tools} tool(s){deferred}{error}"
        )
    print(f"rules:    {_rules_line(result)}")
    for refused in (rules for rules in result.rules if rules.refused):
        print(f"  {refused.path}: not read — {refused.refused}")
    for kind in ("skill", "command"):
        names = [f"/{e.name}" for e in result.extensions if e.kind == kind and not e.problem]
        print(f"{kind}s:{' ' * (8 - len(kind))}{', '.join(names) or 'none'}")
    for left in (entry for entry in result.extensions if entry.problem):
        print(f"  {left.path}: not used — {left.problem}")
    languages = result.language_servers
    first = "the editor's servers, then " if result.language_answers == "editor" else ""
    found = f"{len(languages)} server(s)" if languages else "no servers found"
    print(f"language: {first}the agent's own: {found}")
    for language in languages:
        where = f" in {language.folder}" if language.folder else ""
        pid = f" (pid {language.pid})" if language.pid else ""
        print(f"  {language.language}: {language.name}, {language.state}{where}{pid}")
    if result.sandbox:
        print(f"sandbox:  {result.sandbox.removeprefix('sandbox: ')}")
    return exit_code


def _rules_line(result: StatusResult) -> str:
    """The rules in use, e.g. ``AGENTS.md, pkg/AGENTS.md (cut: 40,000 bytes)``."""
    shown = []
    for rules in result.rules:
        if rules.refused:
            continue
        cut = f" (cut: {rules.bytes:,} bytes)" if rules.truncated else ""
        shown.append(rules.path + cut)
    return ", ".join(shown) if shown else "none (no AGENTS.md or CLAUDE.md found)"
