"""The contract's commands, served.

:class:`AgentService` holds what the commands share (settings, the editor,
the workspace folders with their stores and journals, the resolved
provider, the running turns) and implements each command of
``docs/protocol.md``. ``rhema.turn``, ``rhema.step`` and ``rhema.edit`` are
plans run by :class:`~rhema_lsp.server.lifecycle.RunLifecycle`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from lsprotocol import types

from rhema_lsp import __version__
from rhema_lsp.engine import (
    ProviderError,
    ToolContext,
)
from rhema_lsp.providers import ProviderSettings, ResolvedProvider, resolve_provider
from rhema_lsp.server.args import (
    CancelArgs,
    ContextRef,
    EditArgs,
    InvalidArguments,
    SessionArgs,
    SessionsArgs,
    StatusArgs,
    StepArgs,
    TurnArgs,
    UndoTurnArgs,
    parse_args,
)
from rhema_lsp.server.driver import Outcome
from rhema_lsp.server.errors import BadArguments, CommandFailed
from rhema_lsp.server.folders import FolderError, Folders
from rhema_lsp.server.lifecycle import Plan, RunLifecycle
from rhema_lsp.server.lsp_editor import LspEditor
from rhema_lsp.server.prompts import (
    EDIT_SYSTEM,
    ContextPiece,
    edit_prompt,
    render_context,
    strip_fence,
)
from rhema_lsp.server.runs import Run, RunRegistry, SessionRunningError
from rhema_lsp.server.settings import Settings
from rhema_lsp.server.stream import RunStream
from rhema_lsp.server.undo import revert_turn
from rhema_lsp.sessions import SessionInfo, SessionStoreError
from rhema_lsp.tools.positions import LineIndex, minimal_edits, uri_to_path

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

__all__ = ["AgentService", "EditTargetError"]

logger = logging.getLogger(__name__)

SHUTDOWN_WAIT = 5.0
"""Seconds shutdown gives cancelled runs to checkpoint their sessions."""


MsgId = int | str | None


class EditTargetError(ValueError):
    """``rhema.edit`` names a document outside the workspace or unreadable."""


class AgentService:
    """Everything the commands share, and the commands themselves."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.settings = Settings()
        self.editor = LspEditor(server)
        self.folders = Folders(server)
        self.runs = RunRegistry()
        self._provider: ResolvedProvider | None = None
        self._provider_key: ProviderSettings | None = None
        self.lifecycle = RunLifecycle(
            server, self.editor, self.folders, self.runs, lambda: self.settings, self.provider
        )

    # -- shared pieces -------------------------------------------------------

    def update_settings(self, settings: Settings) -> None:
        """Adopt new settings; the provider is resolved again on next use."""
        self.settings = settings

    def _provider_settings(self) -> ProviderSettings:
        s = self.settings
        return ProviderSettings(
            provider=s.provider, model=s.model, base_url=s.base_url, protocol=s.protocol
        )

    async def provider(self) -> ResolvedProvider:
        """The provider the settings name, resolved once per settings."""
        wanted = self._provider_settings()
        if self._provider is None or self._provider_key != wanted:
            self._provider = await resolve_provider(wanted)
            self._provider_key = wanted
        return self._provider

    def _context(self, refs: list[ContextRef]) -> list[ContextPiece]:
        encoding = self.editor.position_encoding
        pieces = []
        for ref in refs:
            document = self.editor.open_document(ref.uri)
            path = uri_to_path(ref.uri)
            if document is not None:
                text = document.text
            else:
                try:
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise FolderError(f"`context` {ref.uri} cannot be read: {exc}") from exc
            start = end = None
            if ref.range is not None:
                index = LineIndex(text, encoding)
                start = index.offset(types.Position(**ref.range.start.model_dump()))
                end = index.offset(types.Position(**ref.range.end.model_dump()))
            pieces.append(ContextPiece(path=self._display(path), text=text, start=start, end=end))
        return pieces

    def _display(self, path: Path) -> str:
        real = Path(os.path.realpath(path))
        for root in self.folders.roots():
            if root in real.parents:
                return str(real.relative_to(root))
        return str(path)

    # -- commands --------------------------------------------------------------

    async def execute(
        self, command: str, arguments: list[Any] | None, msg_id: MsgId, token: MsgId
    ) -> Any:
        """Run one contract command with its raw arguments.

        Raises
        ------
        BadArguments
            The arguments do not validate or name nothing usable.
        CommandFailed
            The command cannot be served now (unknown or busy session, ...).
        """
        try:
            return await self._dispatch(command, arguments, msg_id, token)
        except (InvalidArguments, FolderError, EditTargetError) as exc:
            raise BadArguments(str(exc)) from exc
        except (SessionRunningError, SessionStoreError) as exc:
            raise CommandFailed(str(exc)) from exc

    async def _dispatch(
        self, command: str, arguments: list[Any] | None, msg_id: MsgId, token: MsgId
    ) -> Any:
        match command:
            case "rhema.turn":
                return await self.turn(parse_args(command, TurnArgs, arguments), msg_id, token)
            case "rhema.step":
                return await self.step(parse_args(command, StepArgs, arguments), msg_id, token)
            case "rhema.cancel":
                return self.cancel(parse_args(command, CancelArgs, arguments))
            case "rhema.sessions":
                return await self.sessions(parse_args(command, SessionsArgs, arguments))
            case "rhema.openSession":
                return await self.open_session(parse_args(command, SessionArgs, arguments))
            case "rhema.deleteSession":
                return await self.delete_session(parse_args(command, SessionArgs, arguments))
            case "rhema.edit":
                return await self.edit(parse_args(command, EditArgs, arguments), msg_id, token)
            case "rhema.undoTurn":
                return await self.undo_turn(parse_args(command, UndoTurnArgs, arguments))
            case "rhema.status":
                parse_args(command, StatusArgs, arguments)
                return await self.status()
        raise BadArguments(f"unknown command {command!r}")

    async def _folder_for(
        self, folder: str | None, refs: list[ContextRef], session: str | None
    ) -> Path:
        """The folder of ``session`` when one is named, else as ``folder`` and
        the context say."""
        if session is None:
            return self.folders.resolve(folder, [ref.uri for ref in refs])
        state = await self.folders.find(session, self.settings.session_store)
        if folder is not None and self.folders.resolve(folder, []) != state.path:
            raise FolderError(f"`folder` {folder} is not the folder of session {session}")
        return state.path

    def _prompt_with_context(self, prompt: str, refs: list[ContextRef]) -> str:
        if not refs:
            return prompt
        return f"{prompt}\n\n{render_context(self._context(refs))}"

    async def turn(
        self, args: TurnArgs, msg_id: int | str | None, token: int | str | None
    ) -> dict[str, Any]:
        folder = await self._folder_for(args.folder, args.context, args.session)
        plan = Plan(
            folder=folder,
            session=args.session,
            mode=args.mode or self.settings.mode,
            max_steps=args.max_steps or self.settings.max_steps,
            prompt=self._prompt_with_context(args.prompt, args.context),
            title=args.prompt,
        )
        result = await self.lifecycle.run(plan, msg_id=msg_id, token=token)
        result.pop("toolCalls")
        return result

    async def step(
        self, args: StepArgs, msg_id: int | str | None, token: int | str | None
    ) -> dict[str, Any]:
        if args.session is None and args.prompt is None:
            raise FolderError("`prompt` is required to start a new session")
        plan = Plan(
            folder=await self._folder_for(args.folder, args.context, args.session),
            session=args.session,
            mode=args.mode or self.settings.mode,
            max_steps=1,
            prompt=None
            if args.prompt is None
            else self._prompt_with_context(args.prompt, args.context),
            title=args.prompt or "",
            single_step=True,
        )
        result = await self.lifecycle.run(plan, msg_id=msg_id, token=token)
        result.pop("steps")
        return result

    def cancel(self, args: CancelArgs) -> dict[str, Any]:
        return {"cancelled": self.runs.cancel(args.session)}

    async def sessions(self, args: SessionsArgs) -> list[dict[str, Any]]:
        folders = [self.folders.resolve(args.folder, [])] if args.folder else self.folders.roots()
        listed: list[SessionInfo] = []
        for folder in folders:
            state = await self.folders.state(folder, self.settings.session_store)
            for info in await state.store.list():
                self.folders.remember(info.id, folder)
                listed.append(info)
        listed.sort(key=lambda info: info.updated_at, reverse=True)
        return [
            {
                "session": info.id,
                "folder": info.folder,
                "title": info.title,
                "createdAt": info.created_at,
                "updatedAt": info.updated_at,
                "turns": info.turns,
                "running": info.running or self.runs.is_running(info.id),
            }
            for info in listed
        ]

    async def open_session(self, args: SessionArgs) -> dict[str, Any]:
        state = await self.folders.find(args.session, self.settings.session_store)
        info = await state.store.info(args.session)
        resolver = self.lifecycle.tools(state, self.settings.mode)
        stream = RunStream(
            self.lifecycle.send_event,
            session=info.id,
            turn=info.turns,
            next_seq=self.lifecycle.next_seq(info.id),
        )
        ctx = ToolContext(cwd=state.path, run_id=f"{info.id}:{info.turns}")
        if self.runs.is_running(info.id):
            session = await state.store.load(info.id)
            rerun: list[str] = []
            interrupted: list[str] = []
        else:
            async with state.store.lease(info.id):
                session, report = await state.store.open_and_resume(info.id, resolver, stream, ctx)
            rerun, interrupted = report.rerun, report.interrupted
        stream.close()
        return {
            "session": info.id,
            "folder": info.folder,
            "title": info.title,
            "messages": [message.model_dump(mode="json") for message in session.history],
            "resumed": {"rerun": rerun, "interrupted": interrupted},
        }

    async def delete_session(self, args: SessionArgs) -> dict[str, Any]:
        state = await self.folders.find(args.session, self.settings.session_store)
        if self.runs.is_running(args.session):
            self.runs.cancel(args.session)
        async with state.store.lease(args.session):
            pass
        deleted = await state.store.delete(args.session)
        self.lifecycle.forget(args.session)
        return {"deleted": deleted}

    async def undo_turn(self, args: UndoTurnArgs) -> dict[str, Any]:
        state = await self.folders.find(args.session, self.settings.session_store)
        info = await state.store.info(args.session)
        turn = args.turn or info.turns
        return await revert_turn(
            self.editor, state.journal, f"{info.id}:{turn}", label=f"rhema: undo turn {turn}"
        )

    async def edit(
        self, args: EditArgs, msg_id: int | str | None, token: int | str | None
    ) -> dict[str, Any]:
        path = Path(os.path.realpath(uri_to_path(args.uri)))  # noqa: ASYNC240
        folder = self.folders.resolve(None, [args.uri])
        if folder != path and folder not in path.parents:
            raise EditTargetError(f"`uri` {args.uri} is outside every workspace folder")
        pieces = self._context([ContextRef(uri=args.uri, range=args.range)])
        piece = pieces[0]
        assert piece.start is not None and piece.end is not None
        before = self.editor.open_document(args.uri)
        selected = piece.text[piece.start : piece.end]
        plan = Plan(
            folder=folder,
            session=args.session,
            mode="edit",
            max_steps=1,
            prompt=edit_prompt(args.instruction, piece, selected),
            title=f"Edit: {args.instruction}",
            single_step=True,
            system=EDIT_SYSTEM,
            tools=False,
        )
        if args.session is not None:
            plan.folder = (await self.folders.find(args.session, self.settings.session_store)).path

        async def finish(outcome: Outcome, run: Run) -> dict[str, Any]:
            replacement = strip_fence(outcome.text)
            new_text = piece.text[: piece.start] + replacement + piece.text[piece.end :]
            applied = await self._apply_rewrite(
                args.uri, piece.text, new_text, before.version if before else None, run
            )
            return {"applied": applied}

        result = await self.lifecycle.run(plan, msg_id=msg_id, token=token, finish=finish)
        result.setdefault("applied", False)
        return {"session": result["session"], "applied": result["applied"], **_brief(result)}

    async def _apply_rewrite(
        self, uri: str, old: str, new: str, version: int | None, run: Run
    ) -> bool:
        current = self.editor.open_document(uri)
        if current is not None and (current.text != old or current.version != version):
            return False
        edits = minimal_edits(old, new, self.editor.position_encoding)
        if self.editor.supports_document_changes:
            edit = types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(
                            uri=uri, version=version
                        ),
                        edits=list(edits),
                    )
                ]
            )
        else:
            edit = types.WorkspaceEdit(changes={uri: list(edits)})
        outcome = await self.editor.apply_edit(edit, "rhema: edit selection", {uri: new})
        if outcome.applied:
            state = await self.folders.state(
                self.folders.resolve(None, [uri]), self.settings.session_store
            )
            state.journal.record(f"{run.session}:{run.turn}", "edit", uri, old, new, "edit")
        return bool(outcome.applied)

    async def status(self) -> dict[str, Any]:
        try:
            resolved = await self.provider()
            provider: dict[str, Any] = {
                "name": resolved.name,
                "model": resolved.model,
                "baseUrl": resolved.base_url,
                "source": resolved.source,
            }
        except ProviderError as exc:
            provider = {
                "name": None,
                "model": None,
                "baseUrl": None,
                "source": None,
                "error": str(exc),
            }
        return {
            "version": __version__,
            "provider": provider,
            "folders": [str(root) for root in self.folders.roots()],
            "mode": self.settings.mode,
            "running": self.runs.sessions(),
        }

    async def shutdown(self) -> None:
        """Cancel every run, give them a moment to checkpoint, close the stores."""
        self.runs.cancel()
        with anyio.move_on_after(SHUTDOWN_WAIT):
            await self.runs.wait_idle()
        await self.folders.close()


def _brief(result: dict[str, Any]) -> dict[str, Any]:
    return {"stopReason": result["stopReason"], "text": result["text"], "usage": result["usage"]}
