"""The tools the model is offered, per mode, with their argument schemas.

``ask`` reads (``read_file``, ``list_dir``, ``find_files``, ``grep``);
``edit`` adds ``edit_file``, ``write_file``, ``rename_path``,
``delete_path``; ``agent`` adds ``run_command``. Read tools are
replay-safe, every other tool is not. Argument names are snake_case, as the
editor contract (ARCHITECTURE.md) fixes them.
"""

from __future__ import annotations

from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.engine.tools import ReplaySafety
from rhema_lsp.tools.editor import Mode

__all__ = ["READ_TOOLS", "TOOLS_BY_MODE", "replay_safety_of", "specs_for"]


def _spec(
    name: str, description: str, properties: dict[str, object], required: list[str]
) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
    )


_PATH = {
    "type": "string",
    "description": "Relative to the session folder, or absolute inside the workspace.",
}

_SPECS = {
    "read_file": _spec(
        "read_file",
        "Read a text file (the editor's unsaved text when open) as numbered lines. Pages of up "
        "to 2000 lines; use offset/limit for more.",
        {
            "path": _PATH,
            "offset": {"type": "integer", "minimum": 1, "description": "First line (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines."},
        },
        ["path"],
    ),
    "list_dir": _spec(
        "list_dir",
        "List a folder as a tree (files ignored by .gitignore are hidden).",
        {
            "path": _PATH,
            "depth": {
                "type": "integer",
                "minimum": 1,
                "maximum": 6,
                "description": "Levels (default 2).",
            },
        },
        [],
    ),
    "find_files": _spec(
        "find_files",
        "Find files by glob, e.g. '*.py' (any folder) or 'src/**/test_*.py'.",
        {"pattern": {"type": "string"}, "path": _PATH},
        ["pattern"],
    ),
    "grep": _spec(
        "grep",
        "Search file contents with a regular expression (ripgrep syntax); returns path:line: text.",
        {
            "pattern": {"type": "string"},
            "path": _PATH,
            "glob": {
                "type": "string",
                "description": "Only files matching this glob, e.g. '*.ts'.",
            },
            "ignore_case": {"type": "boolean"},
        },
        ["pattern"],
    ),
    "edit_file": _spec(
        "edit_file",
        "Replace old_text with new_text in a file. old_text must match exactly once (or set "
        "replace_all). Read the file first.",
        {
            "path": _PATH,
            "old_text": {"type": "string"},
            "new_text": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        ["path", "old_text", "new_text"],
    ),
    "write_file": _spec(
        "write_file",
        "Create a file, or replace a file's whole content.",
        {"path": _PATH, "content": {"type": "string"}},
        ["path", "content"],
    ),
    "rename_path": _spec(
        "rename_path",
        "Rename or move a file or folder.",
        {"from": _PATH, "to": _PATH},
        ["from", "to"],
    ),
    "delete_path": _spec(
        "delete_path",
        "Delete a file, or a folder with its contents (the user is asked first).",
        {"path": _PATH},
        ["path"],
    ),
    "run_command": _spec(
        "run_command",
        "Run a shell command in the session folder (the user approves it). Output streams; the "
        "result ends with the exit code.",
        {
            "command": {"type": "string"},
            "timeout_s": {
                "type": "number",
                "minimum": 1,
                "description": "Default 120, at most 600.",
            },
        },
        ["command"],
    ),
}

READ_TOOLS = ("read_file", "list_dir", "find_files", "grep")
_EDIT_TOOLS = ("edit_file", "write_file", "rename_path", "delete_path")
TOOLS_BY_MODE: dict[str, tuple[str, ...]] = {
    "ask": READ_TOOLS,
    "edit": READ_TOOLS + _EDIT_TOOLS,
    "agent": (*READ_TOOLS, *_EDIT_TOOLS, "run_command"),
}


def specs_for(mode: Mode) -> list[ToolSpec]:
    """The specs offered in ``mode``."""
    return [_SPECS[name] for name in TOOLS_BY_MODE[mode]]


def replay_safety_of(name: str) -> ReplaySafety:
    """``SAFE`` for the read tools, ``UNSAFE`` for everything else."""
    return ReplaySafety.SAFE if name in READ_TOOLS else ReplaySafety.UNSAFE
