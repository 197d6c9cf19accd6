"""``WorkspaceTools``: the engine's ``ToolResolver`` over a confined workspace.

It checks the call against the mode's tool set, parses its arguments with
the tool's model (:mod:`~rhema_lsp.tools.specs`: no argument is checked or
defaulted here), then dispatches to the read tools
(:mod:`~rhema_lsp.tools.reading`, :mod:`~rhema_lsp.tools.search`), the edit
tools (:mod:`~rhema_lsp.tools.editing`), the language tools
(:mod:`~rhema_lsp.tools.language_tools`) and ``run_command``
(:mod:`~rhema_lsp.tools.commands`). With a language service, the results of
``edit_file``, ``write_file`` and ``rename_symbol`` end with the problems
they introduced or removed (:mod:`~rhema_lsp.tools.after_edit`). It never
raises for a bad call: every :class:`~rhema_lsp.tools.errors.ToolError`
becomes an in-band failure naming the path and why. Reads of secret-looking
files are confirmed with the user through the editor first; a command runs
in the sandbox, or is confirmed, as :mod:`~rhema_lsp.tools.command_policy`
decides.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import anyio.to_thread

from rhema_lsp.engine.events import ToolStatus
from rhema_lsp.engine.messages import ToolCall, ToolResult
from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.engine.tools import (
    Progress,
    ReplaySafety,
    StatusReporter,
    StreamingToolResolver,
    ToolContext,
)
from rhema_lsp.tools.after_edit import EditWatch
from rhema_lsp.tools.arguments import ToolArguments
from rhema_lsp.tools.command_policy import CommandPolicy, denial_note
from rhema_lsp.tools.commands import Shell, run_shell
from rhema_lsp.tools.editing import Editing
from rhema_lsp.tools.editor import DENY, Editor
from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.gate import Gate
from rhema_lsp.tools.journal import EditJournal, Journal
from rhema_lsp.tools.language import LanguageService
from rhema_lsp.tools.language_tools import LanguageTools
from rhema_lsp.tools.reading import format_page
from rhema_lsp.tools.search import find_files, grep, list_dir
from rhema_lsp.tools.specs import (
    TOOLS_BY_MODE,
    Definition,
    DeletePath,
    Diagnostics,
    EditFile,
    FindFiles,
    Grep,
    ListDir,
    ReadFile,
    References,
    RenamePath,
    RenameSymbol,
    RunCommand,
    Symbols,
    WriteFile,
    replay_safety_of,
    specs_for,
)
from rhema_lsp.tools.workspace import Workspace
from rhema_lsp.vocabulary import Mode

__all__ = ["WorkspaceTools"]

_Arguments = TypeVar("_Arguments", bound=ToolArguments)


@dataclass(frozen=True, slots=True)
class _Run:
    """What a handler needs of the engine besides the call itself."""

    ctx: ToolContext
    progress: Progress
    status: StatusReporter


_Handler = Callable[[ToolCall, _Run], Awaitable[ToolResult]]


def _parsed(
    arguments: type[_Arguments],
    handler: Callable[[ToolCall, _Arguments, _Run], Awaitable[ToolResult]],
) -> tuple[str, _Handler]:
    """``handler`` under its tool's name, given the call's arguments as ``arguments``."""

    async def checked(call: ToolCall, run: _Run) -> ToolResult:
        return await handler(call, arguments.parse(call.args), run)

    return arguments.tool_name, checked


def _ignore_status(_status: ToolStatus) -> None:
    """The status reporter when the driver passed none."""


class WorkspaceTools(StreamingToolResolver):
    """The agent's hands, confined to the workspace.

    Parameters
    ----------
    roots
        The workspace folders.
    folder
        The session's folder (inside a root): relative paths and commands start here.
    mode
        ``ask``, ``edit`` or ``agent``: which tools are offered.
    editor
        Open documents, edit application and confirmations.
    command_allowlist
        Commands that run without asking (see :func:`~rhema_lsp.tools.commands.is_allowlisted`).
    commands
        The sandbox settings (:mod:`~rhema_lsp.tools.command_policy`; its
        allow-list is ``command_allowlist``); without them, no sandbox, and
        every command not allow-listed is asked about.
    review
        Whether edits carry change annotations needing the user's confirmation.
    journal
        Where applied changes are recorded (a fresh one if omitted: :attr:`journal`).
    env
        The environment commands start from (default: this process's), scrubbed of keys.
    language
        Who answers the language tools (``None``: they say no server is available).
    diagnostics_wait
        Seconds an edit waits for the edited version's diagnostics.
    """

    def __init__(
        self,
        roots: Sequence[Path],
        folder: Path,
        mode: Mode,
        editor: Editor,
        *,
        command_allowlist: Sequence[str] = (),
        commands: CommandPolicy | None = None,
        review: bool = False,
        journal: Journal | None = None,
        env: Mapping[str, str] | None = None,
        language: LanguageService | None = None,
        diagnostics_wait: float = 1.5,
    ) -> None:
        if mode not in TOOLS_BY_MODE:
            raise ValueError(f"unknown mode {mode!r}")
        self.gate = Gate(Workspace(roots, folder), editor)
        self.ws = self.gate.ws
        self.mode: Mode = mode
        self.editor = editor
        self.command_allowlist = tuple(command_allowlist)
        policy = commands if commands is not None else CommandPolicy(mode="off")
        self.commands = replace(policy, allowlist=self.command_allowlist)
        self.journal: Journal = journal if journal is not None else EditJournal()
        self.env = dict(os.environ if env is None else env)
        self.diagnostics_wait = diagnostics_wait
        self.watch = None if language is None else EditWatch(self.ws, language, diagnostics_wait)
        self.language = LanguageTools(self.gate, language)
        self.shell: Shell = run_shell
        """Runs approved commands (a door may put its own in place)."""
        self.editing = Editing(self.gate, self.journal, review, self.watch)
        self._handlers: dict[str, _Handler] = dict(
            [
                _parsed(ReadFile, self._read_file),
                _parsed(ListDir, self._list_dir),
                _parsed(FindFiles, self._find_files),
                _parsed(Grep, self._grep),
                _parsed(Diagnostics, self._diagnostics),
                _parsed(Symbols, self._symbols),
                _parsed(Definition, self._definition),
                _parsed(References, self._references),
                _parsed(EditFile, self._edit_file),
                _parsed(WriteFile, self._write_file),
                _parsed(RenamePath, self._rename_path),
                _parsed(DeletePath, self._delete_path),
                _parsed(RenameSymbol, self._rename_symbol),
                _parsed(RunCommand, self._run_command),
            ]
        )

    def specs(self) -> list[ToolSpec]:
        """The tools of the current mode."""
        return specs_for(self.mode)

    def replay_safety(self, name: str) -> ReplaySafety:
        """Read tools are ``SAFE``; every other tool ``UNSAFE``."""
        return replay_safety_of(name)

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """Run one call, streaming command output through ``progress``."""
        offered = TOOLS_BY_MODE[self.mode]
        if call.name not in offered:
            known = "unknown tool" if call.name not in self._handlers else "not available"
            return ToolResult.failure(
                call.id,
                f"{call.name}: {known} in {self.mode} mode; available: {', '.join(offered)}",
            )
        report = status if status is not None else _ignore_status
        try:
            return await self._handlers[call.name](call, _Run(ctx, progress, report))
        except ToolError as exc:
            if self.watch is not None:
                self.watch.forget(call.id)
            return ToolResult.failure(call.id, str(exc))

    # -- read tools ----------------------------------------------------------

    async def _read_file(self, call: ToolCall, args: ReadFile, run: _Run) -> ToolResult:
        snap = await self.gate.read(args.path)
        shown = self.ws.display(snap.target.path)
        if snap.text is None:
            raise ToolError(f"{snap.target.requested}: no such file")
        return ToolResult.success(call.id, format_page(shown, snap.text, args.offset, args.limit))

    async def _list_dir(self, call: ToolCall, args: ListDir, run: _Run) -> ToolResult:
        return ToolResult.success(call.id, await list_dir(self.ws, args.path, args.depth))

    async def _find_files(self, call: ToolCall, args: FindFiles, run: _Run) -> ToolResult:
        return ToolResult.success(call.id, await find_files(self.ws, args.pattern, args.path))

    async def _grep(self, call: ToolCall, args: Grep, run: _Run) -> ToolResult:
        content = await grep(
            self.ws, self.editor, args.pattern, args.path, args.glob or None, args.ignore_case
        )
        return ToolResult.success(call.id, content)

    # -- language tools ------------------------------------------------------

    async def _diagnostics(self, call: ToolCall, args: Diagnostics, run: _Run) -> ToolResult:
        content = await self.language.diagnostics(args.path, self.diagnostics_wait)
        return ToolResult.success(call.id, content)

    async def _symbols(self, call: ToolCall, args: Symbols, run: _Run) -> ToolResult:
        return ToolResult.success(call.id, await self.language.symbols(args.query, args.path))

    async def _definition(self, call: ToolCall, args: Definition, run: _Run) -> ToolResult:
        content = await self.language.definition(args.path, args.line, args.symbol)
        return ToolResult.success(call.id, content)

    async def _references(self, call: ToolCall, args: References, run: _Run) -> ToolResult:
        content = await self.language.references(args.path, args.line, args.symbol)
        return ToolResult.success(call.id, content)

    # -- edit tools ----------------------------------------------------------

    async def _checked(self, call: ToolCall, message: str) -> ToolResult:
        """An edit's result, ending with the problems it changed."""
        if self.watch is not None:
            message += await self.watch.report(call.id)
        return ToolResult.success(call.id, message)

    async def _edit_file(self, call: ToolCall, args: EditFile, run: _Run) -> ToolResult:
        message = await self.editing.edit_file(
            run.ctx, call.id, args.path, args.old_text, args.new_text, args.replace_all
        )
        return await self._checked(call, message)

    async def _write_file(self, call: ToolCall, args: WriteFile, run: _Run) -> ToolResult:
        message = await self.editing.write_file(run.ctx, call.id, args.path, args.content)
        return await self._checked(call, message)

    async def _rename_symbol(self, call: ToolCall, args: RenameSymbol, run: _Run) -> ToolResult:
        source, texts, count = await self.language.rename_texts(
            args.path, args.line, args.symbol, args.new_name
        )
        declined = await self.editing.change_texts(run.ctx, call.id, "rename_symbol", texts)
        changed = [self.ws.display(snap.target.path) for snap, text in texts if snap.text != text]
        if not changed:
            return ToolResult.success(call.id, f"{source}: {args.symbol!r} is already so named")
        message = declined or (
            f"renamed {args.symbol!r} to {args.new_name!r} ({source}): {count} "
            f"edit{'s' if count != 1 else ''} in {len(changed)} "
            f"file{'s' if len(changed) != 1 else ''}: {', '.join(changed)}"
        )
        return await self._checked(call, message)

    async def _rename_path(self, call: ToolCall, args: RenamePath, run: _Run) -> ToolResult:
        message = await self.editing.rename_path(run.ctx, call.id, args.source, args.to)
        return ToolResult.success(call.id, message)

    async def _delete_path(self, call: ToolCall, args: DeletePath, run: _Run) -> ToolResult:
        message = await self.editing.delete_path(run.ctx, call.id, args.path)
        return ToolResult.success(call.id, message)

    # -- commands ------------------------------------------------------------

    async def _run_command(self, call: ToolCall, args: RunCommand, run: _Run) -> ToolResult:
        command, timeout = args.command, args.timeout_s
        folder = self.ws.display(self.ws.folder)
        decision = await anyio.to_thread.run_sync(
            self.commands.decide, command, self.ws.folder, args.escalate, args.reason
        )
        if decision.refused is not None:
            raise ToolError(decision.refused)
        if decision.question is not None:
            run.status(ToolStatus(activity="waiting for approval"))
            answer = await self.editor.confirm(decision.question, [DENY, "Run"])
            if answer != "Run":
                raise ToolError(f"the user did not approve running {command!r}; nothing was run")
        where = "in a sandbox in" if decision.sandbox is not None else "in"
        run.status(ToolStatus(activity=f"running {where} {self.ws.folder}"))
        outcome = await self.shell(
            command,
            self.ws.folder,
            self.ws.fs,
            self.env,
            timeout,
            run.ctx.cancel,
            run.progress,
            sandbox=decision.sandbox,
        )
        if outcome.status == "timeout":
            tail = (
                f"[timed out after {timeout:g} s in {folder}; the command and its children "
                "were killed]"
            )
        elif outcome.status == "cancelled":
            tail = "[cancelled; the command and its children were killed]"
        else:
            tail = f"[exit code {outcome.code}]"
            if decision.sandbox is not None and outcome.code != 0:
                tail = denial_note(outcome.output, decision.sandbox) + tail
        content = f"{outcome.output}{tail}"
        if outcome.status == "exited" and outcome.code == 0:
            return ToolResult.success(call.id, content, code=outcome.code)
        return ToolResult.failure(call.id, content, code=outcome.code)
