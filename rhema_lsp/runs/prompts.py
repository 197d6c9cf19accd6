"""What the model is told: the system prompt for a mode, the editor context
attached to a prompt, and the instructions of an in-place selection edit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = [
    "EDIT_SYSTEM",
    "ContextPiece",
    "edit_prompt",
    "problem_line",
    "render_context",
    "replacement_for",
    "strip_fence",
    "system_prompt",
]

_MODES = {
    "ask": "You may read and search the workspace; you cannot change files.",
    "plan": (
        "This is plan mode: you may read and search the workspace; you cannot change files "
        "or run commands. Work out how to do the user's task, then end the turn with the plan "
        "set by update_plan (every step pending) and a short summary of it; the user reviews "
        "it and runs it in another mode."
    ),
    "edit": (
        "You may read, search and change files. Change files only with the edit tools: "
        "edit_file for targeted replacements (re-read the file first if an edit is "
        "refused), write_file for new files, rename_path and delete_path."
    ),
    "agent": (
        "You may read, search and change files, and run commands with run_command "
        "(the user approves each command). Change files only with the edit tools."
    ),
}

_PLANS = (
    "For a task of several steps, keep a plan with update_plan: set it before you start, "
    "mark each step in_progress as you begin it and completed when done. If the "
    "conversation holds a plan, carry it out and tick its steps. Skip the plan for a "
    "question or a one-step change."
)

_CODE = (
    "For code, prefer the language tools to text search: definition and references "
    "take {{path, line, symbol}} (line counted from 1, symbol as written on that line), "
    "symbols gives a file's outline or searches the workspace, diagnostics the current "
    "problems.{edits}"
)
_EDITS = (
    " rename_symbol renames a symbol everywhere in one edit. The result of each edit "
    "lists the problems it introduced or removed: fix the ones you caused."
)

CONTEXT_LINES = 2000

_LANGUAGES = {
    ".py": "python", ".js": "javascript", ".ts": "typescript", ".tsx": "tsx", ".rs": "rust",
    ".go": "go", ".lua": "lua", ".c": "c", ".h": "c", ".cpp": "cpp", ".java": "java",
    ".rb": "ruby", ".sh": "sh", ".md": "markdown", ".json": "json", ".toml": "toml",
    ".yaml": "yaml", ".yml": "yaml", ".html": "html", ".css": "css", ".sql": "sql",
}  # fmt: skip
"""Fence languages by file suffix, so the model reads context as code."""


def system_prompt(mode: str, folder: Path) -> str:
    """The system prompt of a turn in ``mode`` on ``folder``."""
    return (
        "You are Rhema, a coding agent working inside the user's editor.\n"
        f"The workspace folder is {folder}. Paths are relative to it.\n"
        f"{_MODES.get(mode, _MODES['ask'])}\n"
        f"{_PLANS}\n"
        f"{_CODE.format(edits=_EDITS if mode in ('edit', 'agent') else '')}\n"
        "The editor's unsaved text is what the tools read and edit. Be concise; "
        "answer in Markdown; say what you changed."
    )


EDIT_SYSTEM = (
    "You rewrite a selection of a file as instructed. Reply with the replacement text "
    "for the selection only: no explanation, no Markdown fence, keep the surrounding "
    "indentation style."
)


@dataclass(frozen=True, slots=True)
class ContextPiece:
    """One buffer the user attached, with the selected range if any, and the
    problems the editor reports in it (one line each, see :func:`problem_line`).

    ``start`` and ``end`` are character offsets into ``text``.
    """

    path: str
    text: str
    start: int | None = None
    end: int | None = None
    problems: tuple[str, ...] = ()


def problem_line(
    line: int, message: str, severity: str, source: str | None, code: int | str | None
) -> str:
    """A reported problem as the model reads it, e.g. ``line 3 (error,
    pyflakes F821): undefined name 'nam'`` (``line`` counted from 0)."""
    origin = " ".join(str(part) for part in (source, code) if part not in (None, ""))
    label = f"{severity}, {origin}" if origin else severity
    return f"line {line + 1} ({label}): {' '.join(message.split())}"


def _fence_for(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return fence


def render_context(pieces: list[ContextPiece]) -> str:
    """The attached buffers as Markdown, the selection marked in place."""
    blocks = []
    for piece in pieces:
        text = piece.text
        note = "(the editor's current text, unsaved changes included)"
        if piece.start is not None and piece.end is not None:
            line_from = text.count("\n", 0, piece.start) + 1
            line_to = text.count("\n", 0, piece.end) + 1
            note += (
                f"; the selection is lines {line_from}-{line_to}, marked «selection»…«/selection»"
            )
            text = (
                text[: piece.start]
                + "«selection»"
                + text[piece.start : piece.end]
                + "«/selection»"
                + text[piece.end :]
            )
        lines = text.splitlines(keepends=True)
        if len(lines) > CONTEXT_LINES:
            text = "".join(lines[:CONTEXT_LINES])
            note += f"; only the first {CONTEXT_LINES} lines are shown, read_file for more"
        fence = _fence_for(text)
        language = _LANGUAGES.get(PurePosixPath(piece.path).suffix.lower(), "")
        block = f"{piece.path} {note}:\n{fence}{language}\n{text}\n{fence}"
        if piece.problems:
            listed = "\n".join(f"- {problem}" for problem in piece.problems)
            block += f"\nProblems the editor reports in {piece.path}:\n{listed}"
        blocks.append(block)
    return "\n\n".join(blocks)


def edit_prompt(instruction: str, piece: ContextPiece, selected: str) -> str:
    """The user message of an in-place selection edit."""
    return (
        f"Instruction: {instruction}\n\n{render_context([piece])}\n\n"
        f"Selected text to rewrite:\n{_fence_for(selected)}\n{selected}\n{_fence_for(selected)}"
    )


def replacement_for(selected: str, reply: str) -> str:
    """The text that replaces ``selected``: the reply without an enclosing
    fence, ending in a newline exactly when the selection did (models drop
    the last newline of a whole-line selection)."""
    text = strip_fence(reply)
    if selected.endswith("\n") and not text.endswith("\n"):
        return text + "\n"
    return text


def strip_fence(text: str) -> str:
    """The reply without one enclosing Markdown fence, if the model added one."""
    stripped = text.strip("\n")
    lines = stripped.split("\n")
    if len(lines) >= 2 and lines[0].startswith("```") and lines[-1].strip().startswith("```"):
        return "\n".join(lines[1:-1])
    return text
