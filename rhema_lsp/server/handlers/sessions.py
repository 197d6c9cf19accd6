"""Commands on stored sessions: ``rhema.sessions``, ``rhema.openSession``,
``rhema.compact``, ``rhema.deleteSession``, ``rhema.forkSession``."""

from __future__ import annotations

from rhema_lsp.contract import (
    COMPACT,
    DELETE_SESSION,
    FORK_SESSION,
    OPEN_SESSION,
    SESSIONS,
    CompactionInfo,
    CompactResult,
    DeleteResult,
    ForkArgs,
    ForkResult,
    OpenSessionArgs,
    OpenSessionResult,
    PlanEntryBody,
    ResumedCalls,
    SessionArgs,
    SessionsArgs,
    SessionSummary,
)
from rhema_lsp.engine import ProviderError
from rhema_lsp.server.errors import CommandFailed
from rhema_lsp.server.router import Request, Service, serves
from rhema_lsp.server.worktrees import worktrees_by_session
from rhema_lsp.sessions import SessionInfo, referenced
from rhema_lsp.tools import latest_plan

__all__: list[str] = []


@serves(SESSIONS)
async def sessions(service: Service, args: SessionsArgs, request: Request) -> list[SessionSummary]:
    state = service.state
    folders = state.folders
    roots = [folders.resolve(args.folder, [])] if args.folder else folders.roots()
    listed: list[SessionInfo] = []
    for folder in roots:
        found = await folders.state(folder, state.settings.session_store)
        for info in await found.store.list():
            folders.remember(info.id, folder)
            listed.append(info)
    listed.sort(key=lambda info: info.updated_at, reverse=True)
    trees = await worktrees_by_session()
    return [
        SessionSummary(
            session=info.id,
            folder=info.folder,
            title=info.title,
            created_at=info.created_at,
            updated_at=info.updated_at,
            turns=info.turns,
            running=info.running or state.runs.is_running(info.id),
            worktree=trees.get(info.id),
        )
        for info in listed
    ]


@serves(OPEN_SESSION)
async def open_session(
    service: Service, args: OpenSessionArgs, request: Request
) -> OpenSessionResult:
    opened = await service.execution.open_session(args.session)
    session = opened.session
    latest = session.compaction
    plan = latest_plan(session.history)
    return OpenSessionResult(
        session=opened.info.id,
        folder=opened.info.folder,
        title=opened.info.title,
        messages=[referenced(m) for m in (session.history if args.full else session.view())],
        resumed=ResumedCalls(rerun=opened.resumed.rerun, interrupted=opened.resumed.interrupted),
        compaction=None
        if latest is None
        else CompactionInfo(
            upto=latest.upto,
            summary_tokens=latest.summary_tokens,
            before=latest.before,
            after=latest.after,
            dropped=latest.dropped,
        ),
        plan=None
        if plan is None
        else [PlanEntryBody(content=e.content, status=e.status) for e in plan],
    )


@serves(COMPACT)
async def compact(service: Service, args: SessionArgs, request: Request) -> CompactResult:
    try:
        done = await service.execution.compact(args.session)
    except ProviderError as exc:
        raise CommandFailed(str(exc)) from exc
    record = done.record
    return CompactResult(
        session=done.session,
        compacted=record is not None,
        before=done.before,
        after=record.after if record is not None else done.before,
        summary_tokens=record.summary_tokens if record is not None else 0,
    )


@serves(DELETE_SESSION)
async def delete_session(service: Service, args: SessionArgs, request: Request) -> DeleteResult:
    return DeleteResult(deleted=await service.execution.delete_session(args.session))


@serves(FORK_SESSION)
async def fork_session(service: Service, args: ForkArgs, request: Request) -> ForkResult:
    state = service.state
    found = await state.state_of(args.session)
    info = await found.store.fork(args.session, args.turn)
    state.folders.remember(info.id, found.path)
    return ForkResult(session=info.id, title=info.title, turns=info.turns)
