"""Custom slash commands: ``/<name> words…`` expanded from the user's files.

Where (nearer first; a name found twice keeps the first): the session
folder's ``.rhema/commands/*.md``, ``.claude/commands/*.md`` and
``.github/prompts/*.prompt.md``, then the user's ``commands`` folder beside
the user config file; then every skill (:mod:`~rhema_lsp.runs.skills`) is a
command too, under its name. A command file is Markdown with optional front
matter: ``description``, ``argument-hint``, ``mode`` (the turn's mode; a
workspace command's only when it gives no more tools than the mode the user
chose, so a cloned repository cannot widen it) and ``model`` (the turn's
model).

:func:`expand` is the one expansion: the door kit calls it
(:meth:`~rhema_lsp.runs.door.Door.expand`) before a prompt's turn is decided,
so every door (the language server and so the headless client, ACP) sends
the same expanded prompt, and the turn's title stays what the user typed.
In the body, ``$ARGUMENTS`` is every word after the name, ``$1``…``$9``
each word (shell-quoted words kept whole); a body that names neither gets
the words appended as ``ARGUMENTS: …``. A skill expands to its body, with
the words appended the same way. Text starting with ``/`` that names no
command is an ordinary prompt (a path, say). Reading follows
:mod:`~rhema_lsp.runs.extension_files` (confined, capped, never fatal: a
malformed file is a problem, reported with the skills').
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from rhema_lsp.runs.extension_files import (
    MAX_ENTRIES,
    read_text_file,
    split_front_matter,
    text_of,
    workspace_dir,
)
from rhema_lsp.runs.skills import NAME, SkillProblem, SkillSet, find_skills, user_extension_dir
from rhema_lsp.vocabulary import MODES, Mode

__all__ = [
    "COMMAND_DIRS",
    "Command",
    "CommandSet",
    "Expansion",
    "expand",
    "find_commands",
    "parse_slash",
    "read_commands",
]

COMMAND_DIRS = (
    (".rhema/commands", ".md"),
    (".claude/commands", ".md"),
    (".github/prompts", ".prompt.md"),
)
"""The workspace's command folders, nearer first, with their files' suffix."""

_SLASH = re.compile(r"^/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:[ \t]+(.*))?$", re.DOTALL)
_ARG = re.compile(r"\$(ARGUMENTS|[1-9])")


@dataclass(frozen=True, slots=True)
class Command:
    """One custom command: what ``/name`` expands to, and how it is offered."""

    name: str
    description: str
    body: str
    shown: str
    hint: str = ""
    mode: Mode | None = None
    model: str | None = None
    skill: bool = False
    workspace: bool = False
    """Whether it comes from the workspace (its ``mode`` can only narrow)."""


@dataclass(frozen=True, slots=True)
class CommandSet:
    """A folder's commands (skills included), in name order, and the problems."""

    commands: tuple[Command, ...] = ()
    problems: tuple[SkillProblem, ...] = ()

    def get(self, name: str) -> Command | None:
        """The command called ``name``, or ``None``."""
        return next((command for command in self.commands if command.name == name), None)


@dataclass(frozen=True, slots=True)
class Expansion:
    """A prompt a command expanded: the text, and the turn's mode and model
    when the command sets them."""

    command: Command
    prompt: str
    mode: Mode | None
    model: str | None


def _read_command(
    path: Path, name: str, base: Path, shown: str, workspace: bool
) -> Command | SkillProblem:
    read = read_text_file(path, base, workspace=workspace)
    if read.problem is not None:
        return SkillProblem(shown, read.problem)
    try:
        matter, body = split_front_matter(read.text)
    except ValueError as exc:
        return SkillProblem(shown, str(exc))
    mode = text_of(matter, "mode").strip() or None
    if mode is not None and mode not in MODES:
        return SkillProblem(shown, f"its mode {mode[:40]!r} is none of {', '.join(MODES)}")
    if not body.strip():
        return SkillProblem(shown, "has no text to send")
    described = text_of(matter, "description").strip() or body.strip().splitlines()[0][:120]
    hint = text_of(matter, "argument-hint").strip()
    model = text_of(matter, "model").strip() or None
    return Command(name, described, body, shown, hint, mode, model, workspace=workspace)


def _places(folder: Path, user: Path | None) -> list[tuple[Path, str, bool]]:
    places = []
    for relative, suffix in COMMAND_DIRS:
        found = workspace_dir(folder, relative)
        if found is not None:
            places.append((found, suffix, True))
    if user is not None and user.is_dir():
        places.append((user.resolve(), ".md", False))
    return places


def find_commands(
    folder: Path, config_path: Path | None, skills: SkillSet | None = None
) -> CommandSet:
    """The commands of ``folder`` and of the user, then ``skills`` (default:
    read now). Blocking: call it in a worker thread."""
    if skills is None:
        skills = find_skills(folder, user_extension_dir("skills", config_path))
    commands: dict[str, Command] = {}
    problems = list(skills.problems)
    for base, suffix, workspace in _places(folder, user_extension_dir("commands", config_path)):
        try:
            entries = sorted(base.iterdir())[:MAX_ENTRIES]
        except OSError:
            continue
        for path in entries:
            if not path.name.endswith(suffix) or path.name.startswith("."):
                continue
            name = path.name.removesuffix(suffix)
            shown = _shown(path, folder)
            if not NAME.match(name):
                problems.append(SkillProblem(shown, "its name is not letters, digits and -_.:"))
                continue
            read = _read_command(path, name, base, shown, workspace)
            if isinstance(read, SkillProblem):
                problems.append(read)
            elif name not in commands:
                commands[name] = read
    for skill in skills.skills:
        if skill.name not in commands:
            commands[skill.name] = Command(
                skill.name, skill.description, skill.body, skill.shown, skill=True
            )
    ordered = tuple(sorted(commands.values(), key=lambda command: command.name))
    return CommandSet(ordered, tuple(problems))


def _shown(path: Path, folder: Path) -> str:
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)


async def read_commands(folder: Path, config_path: Path | None) -> CommandSet:
    """:func:`find_commands` in a worker thread."""
    return await anyio.to_thread.run_sync(find_commands, folder, config_path)


def parse_slash(text: str) -> tuple[str, str] | None:
    """``(name, words)`` of ``text`` when it starts with ``/name``."""
    match = _SLASH.match(text.strip())
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def fill(body: str, arguments: str) -> str:
    """``body`` with ``$ARGUMENTS`` and ``$1``…``$9`` replaced (see the module
    docstring); the words appended when it names neither."""
    words = _words(arguments)

    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    if _ARG.search(body):
        return _ARG.sub(one, body).strip()
    text = body.strip()
    return f"{text}\n\nARGUMENTS: {arguments}" if arguments else text


def expand(text: str, commands: CommandSet, chosen: Mode = "agent") -> Expansion | None:
    """``text`` expanded when it starts with ``/name`` naming a command;
    ``None`` when it does not (it is sent as it is). A workspace command's
    ``mode`` is kept only when it gives no more tools than ``chosen`` (the
    mode the user chose): a cloned repository's command cannot widen it."""
    parsed = parse_slash(text)
    if parsed is None:
        return None
    command = commands.get(parsed[0])
    if command is None:
        return None
    mode = command.mode
    if mode is not None and command.workspace and MODES.index(mode) > MODES.index(chosen):
        mode = None
    return Expansion(command, fill(command.body, parsed[1]), mode, command.model)
