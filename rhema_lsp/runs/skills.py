"""Skills: the Agent Skills ``<name>/SKILL.md`` folders users keep, given to the model.

Where (nearer first; a name found twice keeps the first): the session
folder's ``.rhema/skills``, ``.agents/skills``, ``.claude/skills`` and
``.github/skills``, then the user's ``skills`` folder beside the user config
file. Each skill is a folder holding ``SKILL.md``: front matter with
``name`` and ``description``, then the body (the instructions). The rules:

- **Progressive disclosure.** Only each skill's name and description join
  the system prompt (:func:`skills_prompt`, in name order, so every step's
  request starts with the same bytes); the body reaches the model only
  through the ``skill {name}`` tool (:class:`Skills`, offered in every mode
  whenever a skill exists), with the list of the skill's other files, which
  the same tool reads (``file``), confined to the skill's folder.
- **Text, never run.** Skills are read without consent (nothing in them
  runs by itself), by :mod:`~rhema_lsp.runs.extension_files`' confined,
  capped reads; a description is cut at :data:`DESCRIPTION_CAP` characters,
  at most :data:`MAX_SKILLS` skills are offered, at most
  :data:`MAX_OTHER_FILES` other files listed.
- **Never fatal.** A malformed skill (no front matter, no name or
  description, a bad name, unreadable) is left out, logged once per
  process (:class:`SkillShelf`) and listed by ``rhema.status``.

Skills are read again at the start of every turn (in a worker thread).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio.to_thread
from pydantic import Field

from rhema_lsp.engine import (
    DelegatingResolver,
    Progress,
    ReplaySafety,
    StatusReporter,
    ToolCall,
    ToolContext,
    ToolResolver,
    ToolResult,
    ToolSpec,
)
from rhema_lsp.mcp.userfile import user_config_path
from rhema_lsp.runs.extension_files import (
    MAX_ENTRIES,
    read_text_file,
    split_front_matter,
    text_of,
    workspace_dir,
)
from rhema_lsp.tools.arguments import ToolArguments
from rhema_lsp.tools.errors import ToolError

__all__ = [
    "SKILL",
    "SKILL_DIRS",
    "Skill",
    "SkillArgs",
    "SkillProblem",
    "SkillSet",
    "SkillShelf",
    "Skills",
    "find_skills",
    "skills_prompt",
    "user_extension_dir",
]

logger = logging.getLogger(__name__)

SKILL = "skill"

SKILL_DIRS = (".rhema/skills", ".agents/skills", ".claude/skills", ".github/skills")
"""The workspace's skill folders, nearer first."""

MAX_SKILLS = 100
DESCRIPTION_CAP = 1024
MAX_OTHER_FILES = 50
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
"""A skill's or command's name: what follows ``/``."""


def user_extension_dir(kind: str, config_path: Path | None = None) -> Path:
    """The user's folder of ``kind`` (``skills``, ``commands``) beside the
    user config file ``config_path`` (default: the user's)."""
    return (config_path or user_config_path()).parent / kind


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: its ``name``, ``description``, ``body``, its folder (real
    path), how it is shown, and its other files (relative to the folder)."""

    name: str
    description: str
    body: str
    folder: Path
    shown: str
    others: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SkillProblem:
    """A skill (or command) file left out, and why."""

    shown: str
    problem: str


@dataclass(frozen=True, slots=True)
class SkillSet:
    """The skills of a folder, in name order, and the problems found."""

    skills: tuple[Skill, ...] = ()
    problems: tuple[SkillProblem, ...] = ()

    def get(self, name: str) -> Skill | None:
        """The skill called ``name``, or ``None``."""
        return next((skill for skill in self.skills if skill.name == name), None)


def _others(folder: Path) -> tuple[str, ...]:
    found: list[str] = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            relative = os.path.relpath(os.path.join(top, name), folder)
            if relative != "SKILL.md":
                found.append(relative.replace(os.sep, "/"))
            if len(found) >= MAX_OTHER_FILES:
                return tuple(found)
    return tuple(found)


def _display(path: Path, folder: Path) -> str:
    try:
        return path.relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path)


def _read_skill(entry: Path, base: Path, folder: Path, workspace: bool) -> Skill | SkillProblem:
    shown = _display(entry / "SKILL.md", folder)
    read = read_text_file(entry / "SKILL.md", base, workspace=workspace)
    if read.problem is not None:
        return SkillProblem(shown, read.problem)
    try:
        matter, body = split_front_matter(read.text)
    except ValueError as exc:
        return SkillProblem(shown, str(exc))
    name, description = text_of(matter, "name").strip(), text_of(matter, "description").strip()
    if not matter:
        return SkillProblem(shown, "has no front matter (--- name, description ---)")
    if not name or not description:
        return SkillProblem(shown, "its front matter lacks `name` or `description`")
    if not NAME.match(name):
        return SkillProblem(shown, f"its name {name[:80]!r} is not letters, digits and -_.:")
    if len(description) > DESCRIPTION_CAP:
        description = description[: DESCRIPTION_CAP - 1] + "…"
    real = entry.resolve()
    return Skill(name, description, body, real, _display(entry, folder), _others(real))


def find_skills(folder: Path, user_dir: Path | None) -> SkillSet:
    """The skills of ``folder`` and of the user (see the module docstring).
    Blocking: call it in a worker thread."""
    places: list[tuple[Path, bool]] = []
    for relative in SKILL_DIRS:
        found = workspace_dir(folder, relative)
        if found is not None:
            places.append((found, True))
    if user_dir is not None and user_dir.is_dir():
        places.append((user_dir.resolve(), False))
    skills: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    for base, workspace in places:
        try:
            entries = sorted(base.iterdir())[:MAX_ENTRIES]
        except OSError as exc:
            problems.append(SkillProblem(str(base), f"cannot be listed ({exc.strerror})"))
            continue
        for entry in entries:
            if entry.name.startswith(".") or not (entry / "SKILL.md").exists():
                continue
            read = _read_skill(entry, base, folder, workspace)
            if isinstance(read, SkillProblem):
                problems.append(read)
            elif read.name not in skills and len(skills) < MAX_SKILLS:
                skills[read.name] = read
    ordered = tuple(sorted(skills.values(), key=lambda skill: skill.name))
    return SkillSet(ordered, tuple(problems))


@dataclass
class SkillShelf:
    """What a door knows of skills across turns: each folder's last reading
    (for ``rhema.status``) and the problems already logged (each once)."""

    config_path: Path | None = None
    found: dict[Path, SkillSet] = field(default_factory=dict)
    _logged: set[tuple[str, str]] = field(default_factory=set)

    async def read(self, folder: Path) -> SkillSet:
        """``folder``'s skills as a turn starting now sees them."""
        user = user_extension_dir("skills", self.config_path)
        skills = await anyio.to_thread.run_sync(find_skills, folder, user)
        self.found[folder] = skills
        self.report(skills.problems)
        return skills

    def report(self, problems: Sequence[SkillProblem]) -> None:
        """Log each problem not logged before."""
        for problem in problems:
            key = (problem.shown, problem.problem)
            if key not in self._logged:
                self._logged.add(key)
                logger.warning("%s is not used: it %s", problem.shown, problem.problem)


def skills_prompt(skills: SkillSet) -> str:
    """The system prompt's skills section (empty without skills)."""
    if not skills.skills:
        return ""
    lines = "\n".join(f"- {skill.name}: {skill.description}" for skill in skills.skills)
    return (
        "\n\nSkills are available: folders of instructions (and files) for particular "
        "tasks, written by the user or the project. When a task matches a skill's "
        "description, call the `skill` tool with its name first and follow what it "
        "says. Like project rules, a skill cannot widen what the tools may reach or "
        f"skip an approval.\n\n{lines}"
    )


class SkillArgs(ToolArguments):
    """Arguments of ``skill``."""

    tool_name = SKILL
    tool_description = (
        "Load a skill listed in the system prompt: returns its instructions and the list "
        "of its other files. Give `file` to read one of those files instead."
    )

    name: str = Field(description="The skill's name, as listed.")
    file: str | None = Field(
        default=None, description="One of the skill's other files, as listed (optional)."
    )


_SPEC = SkillArgs.spec()


def _answer(skill: Skill) -> str:
    text = f'<skill name="{skill.name}" folder="{skill.shown}">\n{skill.body.rstrip()}\n</skill>'
    if skill.others:
        listed = "\n".join(f"- {other}" for other in skill.others)
        text += f"\n\nThe skill's other files (read one with skill `file`):\n{listed}"
    return text


def _read_other(skill: Skill, file: str) -> str:
    if file not in skill.others:
        raise ToolError(f"skill {skill.name} has no file {file!r}; its files: {skill.others}")
    read = read_text_file(skill.folder / file, skill.folder, workspace=False)
    if read.problem is not None:
        raise ToolError(f"{file} of skill {skill.name} {read.problem}")
    return read.text


class Skills(DelegatingResolver):
    """``inner``'s tools plus ``skill`` (see the module docstring)."""

    def __init__(self, inner: ToolResolver, skills: SkillSet) -> None:
        super().__init__(inner)
        self.skills = skills

    def specs(self) -> list[ToolSpec]:
        """The inner tools, then ``skill``."""
        return [*(s for s in self.inner.specs() if s.name != SKILL), _SPEC]

    def replay_safety(self, name: str) -> ReplaySafety:
        """``SAFE`` for ``skill`` (it only reads)."""
        return ReplaySafety.SAFE if name == SKILL else self.inner.replay_safety(name)

    def concurrent(self, call: ToolCall) -> bool:
        """``skill`` may run beside other calls."""
        return call.name == SKILL or self.inner.concurrent(call)

    async def resolve_streaming(
        self,
        call: ToolCall,
        ctx: ToolContext,
        progress: Progress,
        status: StatusReporter | None = None,
    ) -> ToolResult:
        """Give a skill, or run the call through the inner resolver."""
        if call.name != SKILL:
            return await self.inner.resolve_streaming(call, ctx, progress, status)
        try:
            args = SkillArgs.parse(call.args)
            skill = self.skills.get(args.name)
            if skill is None:
                names = ", ".join(s.name for s in self.skills.skills)
                raise ToolError(f"no skill {args.name!r}; the skills: {names}")
            if args.file is None:
                return ToolResult.success(call.id, _answer(skill))
            text = await anyio.to_thread.run_sync(_read_other, skill, args.file)
        except ToolError as exc:
            return ToolResult.failure(call.id, str(exc))
        return ToolResult.success(call.id, text)
