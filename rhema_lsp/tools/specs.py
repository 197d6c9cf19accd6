"""The tools the model is offered, per mode, each with its argument model.

``ask`` and ``plan`` read (``read_file``, ``list_dir``, ``find_files``,
``grep``) and ask the language server (``diagnostics``, ``symbols``,
``definition``, ``references``); ``edit`` adds ``edit_file``, ``write_file``,
``rename_path``, ``delete_path``, ``rename_symbol``; ``agent`` adds
``run_command``. Read tools are replay-safe, every other tool is not.
``update_plan``, offered in every mode, is not one of these:
:mod:`~rhema_lsp.tools.planning` adds it around whatever resolver a run has.
Argument names are snake_case, as the editor contract (docs/protocol.md,
docs/architecture.md) fixes them.

Each tool's :class:`~rhema_lsp.tools.arguments.ToolArguments` model below is
the one place its arguments are described: the schema the model sees, the
checks a call passes and the defaults the handlers get all come from it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.engine.tools import ReplaySafety
from rhema_lsp.tools.arguments import Integer, ToolArguments
from rhema_lsp.tools.reading import PAGE_LINES
from rhema_lsp.vocabulary import Mode

__all__ = [
    "READ_TOOLS",
    "TOOLS_BY_MODE",
    "Definition",
    "DeletePath",
    "Diagnostics",
    "EditFile",
    "FindFiles",
    "Grep",
    "ListDir",
    "ReadFile",
    "References",
    "RenamePath",
    "RenameSymbol",
    "RunCommand",
    "Symbols",
    "WriteFile",
    "replay_safety_of",
    "specs_for",
]

_PATH = "Relative to the session folder, or absolute inside the workspace."


def _here_if_empty(path: str) -> str:
    return path or "."


WorkspacePath = Annotated[str, Field(description=_PATH)]
"""A path the tool acts on."""

SearchRoot = Annotated[str, AfterValidator(_here_if_empty), Field(description=_PATH)]
"""Where a listing or search starts; empty means the session folder."""


def _runnable(command: str) -> str:
    if not command.strip():
        raise ValueError("is empty")
    if "\x00" in command:
        raise ValueError("contains a NUL byte")
    return command


class ReadFile(ToolArguments):
    """Arguments of ``read_file``."""

    tool_name = "read_file"
    tool_description = (
        "Read a text file (the editor's unsaved text when open) as numbered lines. Pages of up "
        f"to {PAGE_LINES} lines; use offset/limit for more."
    )

    path: WorkspacePath
    offset: Integer = Field(1, ge=1, description="First line (1-based).")
    limit: Integer = Field(PAGE_LINES, ge=1, description="Number of lines.")


class ListDir(ToolArguments):
    """Arguments of ``list_dir``."""

    tool_name = "list_dir"
    tool_description = "List a folder as a tree (files ignored by .gitignore are hidden)."

    path: SearchRoot = "."
    depth: Integer = Field(2, ge=1, le=6, description="Levels.")


class FindFiles(ToolArguments):
    """Arguments of ``find_files``."""

    tool_name = "find_files"
    tool_description = "Find files by glob, e.g. '*.py' (any folder) or 'src/**/test_*.py'."

    pattern: str
    path: SearchRoot = "."


class Grep(ToolArguments):
    """Arguments of ``grep``."""

    tool_name = "grep"
    tool_description = (
        "Search file contents with a regular expression (ripgrep syntax); returns path:line: text."
    )

    pattern: str
    path: SearchRoot = "."
    glob: str | None = Field(None, description="Only files matching this glob, e.g. '*.ts'.")
    ignore_case: bool = False


class EditFile(ToolArguments):
    """Arguments of ``edit_file``."""

    tool_name = "edit_file"
    tool_description = (
        "Replace old_text with new_text in a file. old_text must match exactly once (or set "
        "replace_all). Read the file first."
    )

    path: WorkspacePath
    old_text: str
    new_text: str
    replace_all: bool = False


class WriteFile(ToolArguments):
    """Arguments of ``write_file``."""

    tool_name = "write_file"
    tool_description = "Create a file, or replace a file's whole content."

    path: WorkspacePath
    content: str


class RenamePath(ToolArguments):
    """Arguments of ``rename_path`` (``from`` is ``source`` in Python)."""

    tool_name = "rename_path"
    tool_description = "Rename or move a file or folder."

    source: WorkspacePath = Field(alias="from")
    to: WorkspacePath


class DeletePath(ToolArguments):
    """Arguments of ``delete_path``."""

    tool_name = "delete_path"
    tool_description = "Delete a file, or a folder with its contents (the user is asked first)."

    path: WorkspacePath


class RunCommand(ToolArguments):
    """Arguments of ``run_command``."""

    tool_name = "run_command"
    tool_description = (
        "Run a shell command in the session folder. Where commands are sandboxed it runs at once, "
        "able to write only in the workspace and /tmp, without network; otherwise the user "
        "approves it. Output streams; the result ends with the exit code."
    )

    command: Annotated[str, AfterValidator(_runnable)]
    timeout_s: float = Field(120.0, ge=1, le=600, description="Seconds before it is killed.")
    escalate: bool = Field(
        False,
        description=(
            "Ask the user to run it outside the sandbox (it needs the network, or to write "
            "outside the workspace); give the reason."
        ),
    )
    reason: str = Field("", max_length=500, description="Why it must run outside the sandbox.")


class Diagnostics(ToolArguments):
    """Arguments of ``diagnostics``."""

    tool_name = "diagnostics"
    tool_description = (
        "The language server's current problems (errors, warnings) of a file, or of every open "
        "file when path is omitted."
    )

    path: str | None = Field(None, description=f"{_PATH} Omit for every open file.")


class Symbols(ToolArguments):
    """Arguments of ``symbols``."""

    tool_name = "symbols"
    tool_description = (
        "Find symbols (functions, classes, variables) by name across the workspace, or with path "
        "the outline of that file."
    )

    query: str = Field(description="Part of the name; with path, filters the outline.")
    path: str | None = Field(None, description=f"{_PATH} Give it for the file's outline.")


def _named(symbol: str) -> str:
    if not symbol.strip():
        raise ValueError("is empty")
    if "\n" in symbol or "\r" in symbol:
        raise ValueError("must be on one line")
    return symbol


SymbolName = Annotated[
    str, AfterValidator(_named), Field(description="The name as written on that line.")
]
"""A symbol as it is spelled on its line (the tool finds the column)."""


class Definition(ToolArguments):
    """Arguments of ``definition``."""

    tool_name = "definition"
    tool_description = (
        "Where a symbol is defined, asked of the language server: give the file, the 1-based "
        "line where the symbol appears and its name as written there."
    )

    path: WorkspacePath
    line: Integer = Field(ge=1, description="Line (1-based) where the symbol appears.")
    symbol: SymbolName


class References(Definition):
    """Arguments of ``references``."""

    tool_name = "references"
    tool_description = (
        "Every use of a symbol across the workspace, asked of the language server: give the "
        "file, the 1-based line where the symbol appears and its name as written there."
    )


class RenameSymbol(Definition):
    """Arguments of ``rename_symbol``."""

    tool_name = "rename_symbol"
    tool_description = (
        "Rename a symbol everywhere it is used (a semantic rename by the language server, "
        "applied as one edit): the file, the 1-based line where it appears, its name there, "
        "and the new name."
    )

    new_name: SymbolName = Field(description="The new name.")


_READ = (ReadFile, ListDir, FindFiles, Grep, Diagnostics, Symbols, Definition, References)
_EDIT = (EditFile, WriteFile, RenamePath, DeletePath, RenameSymbol)
_BY_MODE: dict[str, tuple[type[ToolArguments], ...]] = {
    "ask": _READ,
    "plan": _READ,
    "edit": _READ + _EDIT,
    "agent": (*_READ, *_EDIT, RunCommand),
}
_SPECS = {tool.tool_name: tool.spec() for tool in _BY_MODE["agent"]}

READ_TOOLS = tuple(tool.tool_name for tool in _READ)
TOOLS_BY_MODE = {mode: tuple(t.tool_name for t in tools) for mode, tools in _BY_MODE.items()}


def specs_for(mode: Mode) -> list[ToolSpec]:
    """The specs offered in ``mode``."""
    return [_SPECS[name] for name in TOOLS_BY_MODE[mode]]


def replay_safety_of(name: str) -> ReplaySafety:
    """``SAFE`` for the read tools, ``UNSAFE`` for everything else."""
    return ReplaySafety.SAFE if name in READ_TOOLS else ReplaySafety.UNSAFE
