"""Hooks as users write them for Claude Code: where they are, what they match.

The shape, under a top-level ``hooks`` key::

    {"hooks": {"PreToolUse": [{"matcher": "Bash",
                                "hooks": [{"type": "command", "command": "check.sh",
                                           "timeout": 30}]}]}}

for the events of :data:`HOOK_EVENTS`. ``matcher`` (tool events only) is a
regular expression matched against the whole tool name (``Edit|Write``;
empty or ``*`` matches every tool), tried on our tool's name and on each of
Claude Code's names for it (:data:`ALIASES`: ``Bash`` is ``run_command``),
so a copied configuration works. ``timeout`` is in seconds (default
:data:`DEFAULT_TIMEOUT`, at most :data:`MAX_TIMEOUT`).

Where from:

- **The user config file** (``<config>/rhema-lsp/config.json``, beside
  ``mcpServers``): always; they are the user's own programs.
- **The workspace** (``.rhema/settings.json``, ``.claude/settings.json``):
  only after the user's consent for that folder **and that exact content**
  (the SHA-256 of both files together), as a ``.mcp.json`` is: a cloned
  repository must not run a command unasked. :class:`Hooks` asks once per
  content and process with :data:`~rhema_lsp.vocabulary.TRUST_CHOICES`
  (headless, only ``--trust-project`` answers yes; ``--yes`` never does);
  ``Always`` and ``Never`` are kept in the user config file under
  ``workspaceHooks``, and a changed file asks again.

A malformed entry is a problem (logged once), never fatal: the others are
used. Reads are blocking and run in worker threads.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from rhema_lsp.mcp.userfile import remember_workspace_answer, user_config_path
from rhema_lsp.runs.extension_files import read_text_file, workspace_dir
from rhema_lsp.tools.editor import Editor
from rhema_lsp.vocabulary import TRUST_CHOICES

__all__ = [
    "ALIASES",
    "DEFAULT_TIMEOUT",
    "HOOK_EVENTS",
    "MAX_TIMEOUT",
    "WORKSPACE_SETTINGS",
    "Hook",
    "HookGroup",
    "HookSet",
    "Hooks",
    "parse_hooks",
]

logger = logging.getLogger(__name__)

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
WORKSPACE_SETTINGS = (".rhema/settings.json", ".claude/settings.json")
ANSWERS_KEY = "workspaceHooks"

ALIASES: Mapping[str, tuple[str, ...]] = {
    "Bash": ("run_command",),
    "Edit": ("edit_file", "rename_symbol"),
    "MultiEdit": ("edit_file",),
    "Write": ("write_file",),
    "Read": ("read_file",),
    "Grep": ("grep",),
    "Glob": ("find_files",),
    "LS": ("list_dir",),
    "TodoWrite": ("update_plan",),
    "Task": ("task",),
    "Skill": ("skill",),
}
"""Claude Code's tool names, and the tools of ours each stands for."""


def names_of(tool: str) -> tuple[str, ...]:
    """``tool`` and Claude Code's names for it."""
    return (tool, *(alias for alias, ours in ALIASES.items() if tool in ours))


@dataclass(frozen=True, slots=True)
class Hook:
    """One command to run: the shell text, its timeout, where it is from."""

    command: str
    timeout: float
    source: str


@dataclass(frozen=True, slots=True)
class HookGroup:
    """A ``matcher`` and the hooks it runs."""

    matcher: str
    pattern: re.Pattern[str] | None
    hooks: tuple[Hook, ...]

    def matches(self, tool: str | None) -> bool:
        """Whether the group runs for ``tool`` (``None``: not a tool event)."""
        if tool is None or self.pattern is None:
            return True
        return any(self.pattern.fullmatch(name) for name in names_of(tool))


@dataclass(frozen=True, slots=True)
class HookSet:
    """Every hook in use, by event, and the problems found reading them."""

    events: Mapping[str, tuple[HookGroup, ...]] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def matching(self, event: str, tool: str | None = None) -> list[Hook]:
        """The hooks ``event`` runs (for ``tool``), in order, each once."""
        found: list[Hook] = []
        for group in self.events.get(event, ()):
            if group.matches(tool):
                found.extend(hook for hook in group.hooks if hook not in found)
        return found

    def joined(self, other: HookSet) -> HookSet:
        """These hooks, then ``other``'s."""
        events = {
            name: (*self.events.get(name, ()), *other.events.get(name, ())) for name in HOOK_EVENTS
        }
        return HookSet({k: v for k, v in events.items() if v}, self.problems + other.problems)


def _hook(raw: object, source: str, where: str) -> Hook | str:
    if not isinstance(raw, dict) or raw.get("type", "command") != "command":
        return f"{where}: only {{type: command, command}} hooks are run"
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        return f"{where}: `command` must be a non-empty string"
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        return f"{where}: `timeout` must be a positive number of seconds"
    return Hook(command, min(float(timeout), MAX_TIMEOUT), source)


def parse_hooks(raw: object, source: str) -> HookSet:
    """The ``hooks`` value ``raw`` of ``source`` (see the module docstring)."""
    if raw is None:
        return HookSet()
    if not isinstance(raw, dict):
        return HookSet(problems=(f"{source}: `hooks` must be an object",))
    events: dict[str, tuple[HookGroup, ...]] = {}
    problems: list[str] = []
    for event, groups in raw.items():
        if event not in HOOK_EVENTS:
            problems.append(f"{source}: hooks.{event} is not an event ({', '.join(HOOK_EVENTS)})")
            continue
        if not isinstance(groups, list):
            problems.append(f"{source}: hooks.{event} must be a list")
            continue
        kept: list[HookGroup] = []
        for number, group in enumerate(groups):
            where = f"{source}: hooks.{event}[{number}]"
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                problems.append(f"{where}: expected {{matcher, hooks: [...]}}")
                continue
            matcher = group.get("matcher", "")
            if not isinstance(matcher, str):
                problems.append(f"{where}: `matcher` must be a string")
                continue
            pattern = None
            if event in TOOL_EVENTS and matcher not in ("", "*"):
                try:
                    pattern = re.compile(matcher)
                except re.error as exc:
                    problems.append(f"{where}: `matcher` is not a regular expression ({exc})")
                    continue
            hooks: list[Hook] = []
            for index, entry in enumerate(group["hooks"]):
                made = _hook(entry, source, f"{where}.hooks[{index}]")
                if isinstance(made, str):
                    problems.append(made)
                else:
                    hooks.append(made)
            if hooks:
                kept.append(HookGroup(matcher, pattern, tuple(hooks)))
        if kept:
            events[event] = tuple(kept)
    return HookSet(events, tuple(problems))


def _json_object(path: Path, text: str) -> dict[str, Any] | str:
    try:
        raw = json.loads(text)
    except ValueError as exc:
        return f"{path}: not JSON ({exc})"
    return raw if isinstance(raw, dict) else f"{path}: expected a JSON object"


def read_user_hooks(config_path: Path) -> tuple[HookSet, dict[str, tuple[str, bool]]]:
    """The user config file's hooks, and its answers about workspace hooks."""
    read = read_text_file(config_path, config_path.parent.resolve(), workspace=False, whole=True)
    if read.problem is not None:
        missing = read.problem == "cannot be found"
        return HookSet(problems=() if missing else (f"{config_path} {read.problem}",)), {}
    raw = _json_object(config_path, read.text)
    if isinstance(raw, str):
        return HookSet(problems=(raw,)), {}
    answers: dict[str, tuple[str, bool]] = {}
    recorded = raw.get(ANSWERS_KEY)
    for folder, answer in recorded.items() if isinstance(recorded, dict) else ():
        if isinstance(answer, dict) and isinstance(answer.get("sha256"), str):
            answers[str(folder)] = (answer["sha256"], answer.get("use") is True)
    return parse_hooks(raw.get("hooks"), "user config"), answers


def read_workspace_hooks(folder: Path) -> tuple[HookSet, str]:
    """The workspace settings files' hooks, and the SHA-256 of their text
    ("" when there are none)."""
    found = HookSet()
    digest = hashlib.sha256()
    any_file = False
    for relative in WORKSPACE_SETTINGS:
        parent = workspace_dir(folder, str(Path(relative).parent))
        if parent is None or not (parent / Path(relative).name).exists():
            continue
        path = parent / Path(relative).name
        read = read_text_file(path, parent, workspace=True, whole=True)
        if read.problem is not None:
            found = found.joined(HookSet(problems=(f"{relative} {read.problem}",)))
            continue
        raw = _json_object(Path(relative), read.text)
        if isinstance(raw, str):
            found = found.joined(HookSet(problems=(raw,)))
            continue
        hooks = parse_hooks(raw.get("hooks"), relative)
        if hooks.events:
            any_file = True
            digest.update(relative.encode() + b"\0" + read.text.encode() + b"\0")
        found = found.joined(hooks)
    return found, digest.hexdigest() if any_file else ""


class Hooks:
    """The hooks a door's turns run: read again for every turn, the
    workspace's asked about (see the module docstring)."""

    def __init__(self, config_path: Path | None = None) -> None:
        self.config_path = config_path
        self._answered: dict[tuple[str, str], bool] = {}
        self._asking = anyio.Lock()
        self._logged: set[str] = set()

    async def load(self, folder: Path, editor: Editor | None) -> HookSet:
        """The hooks of a turn in ``folder``: the user's, then the
        workspace's when consented to (asked through ``editor``; without
        one, only an answer already given counts)."""
        config = self.config_path or user_config_path()
        user, answers = await anyio.to_thread.run_sync(read_user_hooks, config)
        workspace, sha = await anyio.to_thread.run_sync(read_workspace_hooks, folder)
        hooks = user.joined(HookSet(problems=workspace.problems))
        if sha and await self._consented(folder, sha, workspace, answers, editor):
            hooks = user.joined(workspace)
        for problem in hooks.problems:
            if problem not in self._logged:
                self._logged.add(problem)
                logger.warning("hook not used: %s", problem)
        return hooks

    async def _consented(
        self,
        folder: Path,
        sha: str,
        hooks: HookSet,
        answers: Mapping[str, tuple[str, bool]],
        editor: Editor | None,
    ) -> bool:
        recorded = answers.get(str(folder))
        if recorded is not None and recorded[0] == sha:
            return recorded[1]
        async with self._asking:
            key = (str(folder), sha)
            if key in self._answered:
                return self._answered[key]
            if editor is None:
                return False
            commands = sorted(
                {h.command for g in hooks.events.values() for x in g for h in x.hooks}
            )
            listing = "; ".join(command[:200] for command in commands[:10])
            answer = await editor.confirm(
                f"{folder} has hooks ({', '.join(WORKSPACE_SETTINGS)}) that would run commands "
                f"on your machine around the agent's work ({listing}). Run them in this folder? "
                "“Always” and “Never” are remembered until the file changes.",
                list(TRUST_CHOICES),
            )
            use_now, always, _not_now, never = TRUST_CHOICES
            use = answer in (use_now, always)
            self._answered[key] = use
            if answer in (always, never):
                try:
                    await anyio.to_thread.run_sync(
                        lambda: remember_workspace_answer(
                            folder, sha, use, self.config_path, key=ANSWERS_KEY
                        )
                    )
                except (OSError, ValueError) as exc:
                    logger.error("could not remember the answer about %s: %s", folder, exc)
            return use
