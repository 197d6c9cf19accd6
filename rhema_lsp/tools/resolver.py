"""``WorkspaceTools``: the engine's ``ToolResolver`` over a confined workspace.

It checks the call against the mode's tool set and the argument types, then
dispatches to the read tools (:mod:`~rhema_lsp.tools.reading`,
:mod:`~rhema_lsp.tools.search`), the edit tools
(:mod:`~rhema_lsp.tools.editing`) and ``run_command``
(:mod:`~rhema_lsp.tools.commands`). It never raises for a bad call: every
:class:`~rhema_lsp.tools.errors.ToolError` becomes an in-band failure naming
the path and why. Reads of secret-looking files and every command not
allow-listed are confirmed with the user through the editor first.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from rhema_lsp.engine.events import ToolStatus
from rhema_lsp.engine.messages import JsonValue, ToolCall, ToolResult
from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.engine.tools import Progress, ReplaySafety, StatusReporter, ToolContext, ToolResolver
from rhema_lsp.tools.commands import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, is_allowlisted, run_shell
from rhema_lsp.tools.editing import Editing
from rhema_lsp.tools.editor import Editor, Mode
from rhema_lsp.tools.errors import PathRefused, ToolError
from rhema_lsp.tools.journal import EditJournal
from rhema_lsp.tools.reading import format_page, snapshot
from rhema_lsp.tools.rules import read_confirmation_reason
from rhema_lsp.tools.search import find_files, grep, list_dir
from rhema_lsp.tools.specs import TOOLS_BY_MODE, replay_safety_of, specs_for
from rhema_lsp.tools.workspace import Access, Workspace

__all__ = ["WorkspaceTools"]

_Args = Mapping[str, JsonValue]


@dataclass(frozen=True, slots=True)
class _Run:
    """What a handler needs of the engine besides the call itself."""

    ctx: ToolContext
    progress: Progress
    status: StatusReporter


_Handler = Callable[[ToolCall, _Args, _Run], Awaitable[ToolResult]]


def _ignore_status(_status: ToolStatus) -> None:
    """The status reporter when the driver passed none."""


def _string(args: _Args, key: str, *, required: bool = True, default: str = "") -> str:
    value = args.get(key)
    if value is None:
        if required:
            raise ToolError(f"missing required argument {key!r}")
        return default
    if not isinstance(value, str):
        raise ToolError(f"argument {key!r} must be a string")
    return value


def _integer(args: _Args, key: str, default: int | None) -> int | None:
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ToolError(f"argument {key!r} must be an integer")
    return int(value)


def _number(args: _Args, key: str, default: float) -> float:
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"argument {key!r} must be a number")
    return float(value)


def _flag(args: _Args, key: str) -> bool:
    value = args.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ToolError(f"argument {key!r} must be true or false")
    return value


class WorkspaceTools(ToolResolver):
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
    review
        Whether edits carry change annotations needing the user's confirmation.
    journal
        Where applied changes are recorded (a fresh one if omitted: :attr:`journal`).
    env
        The environment commands start from (default: this process's), scrubbed of keys.
    """

    def __init__(
        self,
        roots: Sequence[Path],
        folder: Path,
        mode: Mode,
        editor: Editor,
        *,
        command_allowlist: Sequence[str] = (),
        review: bool = False,
        journal: EditJournal | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if mode not in TOOLS_BY_MODE:
            raise ValueError(f"unknown mode {mode!r}")
        self.ws = Workspace(roots, folder)
        self.mode: Mode = mode
        self.editor = editor
        self.command_allowlist = tuple(command_allowlist)
        self.journal = journal if journal is not None else EditJournal()
        self.env = dict(os.environ if env is None else env)
        self.editing = Editing(self.ws, editor, self.journal, review)
        self._handlers: dict[str, _Handler] = {
            "read_file": self._read_file,
            "list_dir": self._list_dir,
            "find_files": self._find_files,
            "grep": self._grep,
            "edit_file": self._edit_file,
            "write_file": self._write_file,
            "rename_path": self._rename_path,
            "delete_path": self._delete_path,
            "run_command": self._run_command,
        }

    def specs(self) -> list[ToolSpec]:
        """The tools of the current mode."""
        return specs_for(self.mode)

    def replay_safety(self, name: str) -> ReplaySafety:
        """Read tools are ``SAFE``; every other tool ``UNSAFE``."""
        return replay_safety_of(name)

    async def resolve(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Run one call; a bad call is an in-band failure."""
        return await self.resolve_streaming(call, ctx, lambda _chunk: None)

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
        if not isinstance(call.args, dict):
            return ToolResult.failure(call.id, f"{call.name}: arguments must be a JSON object")
        report = status if status is not None else _ignore_status
        try:
            return await self._handlers[call.name](call, call.args, _Run(ctx, progress, report))
        except ToolError as exc:
            return ToolResult.failure(call.id, str(exc))

    # -- read tools ----------------------------------------------------------

    async def _read_file(self, call: ToolCall, args: _Args, run: _Run) -> ToolResult:
        target = await anyio.to_thread.run_sync(self.ws.resolve, _string(args, "path"), Access.READ)
        shown = self.ws.display(target.path)
        reason = read_confirmation_reason(target.parts) or read_confirmation_reason(
            [Path(target.requested).name]
        )
        if reason is not None:
            answer = await self.editor.confirm(
                f"Rhema wants to read {shown}: {reason}. Allow?", ["Allow", "Deny"]
            )
            if answer != "Allow":
                raise PathRefused(f"{shown}: the user did not allow reading it ({reason})")
        snap = await snapshot(self.ws, self.editor, target)
        if snap.text is None:
            raise ToolError(f"{target.requested}: no such file")
        page = format_page(
            shown, snap.text, _integer(args, "offset", 1) or 1, _integer(args, "limit", None)
        )
        return ToolResult.success(call.id, page)

    async def _list_dir(self, call: ToolCall, args: _Args, run: _Run) -> ToolResult:
        path = _string(args, "path", required=False, default=".") or "."
        depth = _integer(args, "depth", 2) or 2
        return ToolResult.success(call.id, await list_dir(self.ws, path, depth))

    async def _find_files(self, call: ToolCall, args: _Args, run: _Run) -> ToolResult:
        path = _string(args, "path", required=False, default=".") or "."
        return ToolResult.success(
            call.id, await find_files(self.ws, _string(args, "pattern"), path)
        )

    async def _grep(self, call: ToolCall, args: _Args, run: _Run) -> ToolResult:
        path = _string(args, "path", required=False, default=".") or "."
        glob = _string(args, "glob", required=False) or None
        content = await grep(
            self.ws,
            self.editor,
            _string(args, "pattern"),
            path,
            glob,
            _flag(args, "ignore_case"),
        )
        return ToolResult.success(call.id, content)

    # -- edit tools ----------------------------------------------------------

    async def _edit_file(self, call: ToolCall, args: _Args, run: _Run) -> ToolResult:
        message = await self.editing.edit_file(
            run.ctx,
            call.id,
            _string(args, "path"),
            _string(args, "old_text"),
            _string(args, "new_text"),
            _flag(args, "replace_all"),
        )
        return ToolResult.success(call.id, message)

    async def _write_file(self, call: ToolCall, args: _Args, run: _Run) -> ToolResult:
        message = await self.editing.write_file(
            run.ctx, call.id, _string(args, "path"), _string(args, "content")
        )
        return ToolResult.success(call.id, message)

    async def _rename_path(self, call: ToolCall, args: _Args, run: _Run) -> ToolResult:
        message = await self.editing.rename_path(
            run.ctx, call.id, _string(args, "from"), _string(args, "to")
        )
        return ToolResult.success(call.id, message)

    async def _delete_path(self, call: ToolCall, args: _Args, run: _Run) -> ToolResult:
        message = await self.editing.delete_path(run.ctx, call.id, _string(args, "path"))
        return ToolResult.success(call.id, message)

    # -- commands ------------------------------------------------------------

    async def _run_command(self, call: ToolCall, args: _Args, run: _Run) -> ToolResult:
        command = _string(args, "command")
        if not command.strip():
            raise ToolError("command is empty")
        if "\x00" in command:
            raise ToolError("command contains a NUL byte")
        timeout = min(max(_number(args, "timeout_s", DEFAULT_TIMEOUT_S), 1.0), MAX_TIMEOUT_S)
        folder = self.ws.display(self.ws.folder)
        if not is_allowlisted(command, self.command_allowlist):
            run.status(ToolStatus(activity="waiting for approval"))
            answer = await self.editor.confirm(
                f"Rhema wants to run a command in {self.ws.folder}:\n{command}", ["Run", "Deny"]
            )
            if answer != "Run":
                raise ToolError(f"the user did not approve running {command!r}; nothing was run")
        run.status(ToolStatus(activity=f"running in {self.ws.folder}"))
        outcome = await run_shell(
            command, self.ws.folder, self.ws.fs, self.env, timeout, run.ctx.cancel, run.progress
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
        content = f"{outcome.output}{tail}"
        if outcome.status == "exited" and outcome.code == 0:
            return ToolResult.success(call.id, content, code=outcome.code)
        return ToolResult.failure(call.id, content, code=outcome.code)
