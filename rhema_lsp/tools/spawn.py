"""The spawn gate: how every program the agent starts on its own is started.

``run_command``'s shell, ``rg``, the agent's language servers, MCP stdio
servers and the commands it runs in an ACP client's terminal all get their
program, ``PATH`` and environment from here, and nowhere else. Rules:

- **The program is an absolute path.** A bare name (``gopls``) is looked up
  on the cleaned ``PATH`` below, never on the user's raw one; a name with a
  separator (``./bin/server``, ``~/bin/x``: written in the user's own
  configuration) is taken as written, made absolute against the working
  directory. A program that is not an executable file is
  :class:`Unlaunchable`.
- **The cleaned PATH** keeps the absolute entries of the ``PATH`` that
  would have been used, in order, minus duplicates and minus every entry
  inside a workspace root (compared lexically and by real path): an empty
  entry, ``.`` or any relative one means "the working directory", which is
  the workspace, so a ``basedpyright-langserver`` or ``pytest`` planted in
  a cloned repository never runs in place of the user's. The child gets the
  cleaned ``PATH`` too, so what it starts by name is looked up the same way.
- **The environment is scrubbed** of provider keys and credentials, with
  one list for every child: the names in :data:`SECRET_NAMES` and any name
  ending in one of :data:`SECRET_SUFFIXES`, compared in upper case. Values
  the user's configuration gives one program explicitly (an MCP entry's
  ``env``) are added after the scrub: the user chose to give them.
- A command run in an ACP client's terminal runs in the editor's
  environment, which the agent can add to but not remove from: it gets
  :func:`terminal_environment`, every credential name (the list's, and
  those of the agent's own environment) set empty and the cleaned ``PATH``.
- **The sandbox** (:mod:`~rhema_lsp.tools.sandbox`), when the caller
  passes one, wraps the command line last: ``run_command``'s shell, here
  and in an ACP client's terminal (:func:`terminal_command`), runs inside
  it with the environment above.
- The agent's own server process (the headless client starts
  ``rhema-lsp serve``) is not "a program the agent starts on its own": it is
  the agent, and needs the keys.

Blocking (``stat``, ``realpath``): call from a worker thread.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.sandbox import Sandbox

__all__ = [
    "SECRET_NAMES",
    "SECRET_SUFFIXES",
    "Launch",
    "Unlaunchable",
    "clean_path",
    "find_program",
    "is_secret_name",
    "launch",
    "scrubbed_environment",
    "terminal_command",
    "terminal_environment",
]

SECRET_NAMES = frozenset(
    {
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "OPENROUTER_API_KEY",
        "GROQ_API_KEY",
        "MISTRAL_API_KEY",
        "DEEPSEEK_API_KEY",
        "XAI_API_KEY",
        "RHEMA_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "NPM_TOKEN",
    }
)
"""Credential names every child loses (besides :data:`SECRET_SUFFIXES`)."""

SECRET_SUFFIXES = (
    "_API_KEY",
    "_APIKEY",
    "_TOKEN",
    "_SECRET",
    "_PASSWORD",
    "_ACCESS_KEY",
    "_SECRET_KEY",
    "_CREDENTIALS",
)
"""A name ending in one of these (upper case) is a credential."""


class Unlaunchable(ToolError):
    """The program cannot be started: not found on the cleaned ``PATH``, or
    not an executable file."""


def is_secret_name(name: str) -> bool:
    """Whether the environment variable ``name`` holds a credential."""
    upper = name.upper()
    return upper in SECRET_NAMES or upper.endswith(SECRET_SUFFIXES)


def scrubbed_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without provider keys and other credential-like names."""
    return {name: value for name, value in env.items() if not is_secret_name(name)}


def _inside(entry: str, roots: Sequence[Path]) -> bool:
    candidates = {Path(os.path.normpath(entry)), Path(os.path.realpath(entry))}
    for root in roots:
        for base in {Path(os.path.normpath(root)), Path(os.path.realpath(root))}:
            if any(candidate.is_relative_to(base) for candidate in candidates):
                return True
    return False


def clean_path(path: str, roots: Iterable[Path]) -> str:
    """``path``'s absolute entries outside every root, in order, once each."""
    kept: list[str] = []
    listed = list(roots)
    for entry in path.split(os.pathsep):
        if not entry or not os.path.isabs(entry) or entry in kept:
            continue
        if _inside(entry, listed):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def find_program(
    program: str, roots: Iterable[Path], cwd: Path | None = None, path: str | None = None
) -> str | None:
    """``program`` as an absolute path (see the module docstring); ``None``:
    not found, or not an executable file. ``path`` defaults to this process's
    ``PATH``."""
    program = os.path.expanduser(program)
    if os.sep in program:
        if not os.path.isabs(program):
            if cwd is None:
                return None
            program = str(cwd / program)
        program = os.path.normpath(program)
        found = os.path.isfile(program) and os.access(program, os.X_OK)
        return program if found else None
    if path is None:
        path = os.environ.get("PATH", os.defpath)
    return shutil.which(program, path=clean_path(path, roots) or None) if path else None


@dataclass(frozen=True, slots=True)
class Launch:
    """What to start: the command line (its program absolute), the
    environment (scrubbed, the cleaned ``PATH``) and the working directory."""

    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: Path | None


def launch(
    command: Sequence[str],
    *,
    roots: Iterable[Path],
    cwd: Path | None,
    inherit: Mapping[str, str] | None = None,
    given: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> Launch:
    """The :class:`Launch` of ``command`` (see the module docstring).

    Parameters
    ----------
    roots
        The workspace roots: no ``PATH`` entry inside them is used.
    cwd
        The child's working directory (a relative program with a separator
        is found from it).
    inherit
        The environment the child inherits, scrubbed (default: this
        process's).
    given
        Values the user's configuration names for this program, added
        after the scrub.
    sandbox
        Confines the program (its command line wrapped by
        :meth:`~rhema_lsp.tools.sandbox.Sandbox.wrap`).

    Raises
    ------
    Unlaunchable
        No command, or its program is not found (the message names it).
    """
    if not command or not command[0]:
        raise Unlaunchable("no command to start")
    listed = list(roots)
    env = scrubbed_environment(os.environ if inherit is None else inherit)
    env.update(given or {})
    # an empty PATH would make the child search its working directory
    path = clean_path(env.get("PATH", os.defpath), listed) or clean_path(os.defpath, listed)
    env["PATH"] = path
    program = find_program(command[0], listed, cwd, path)
    if program is None:
        where = "not an executable file" if os.sep in command[0] else "not found on PATH"
        if os.sep not in command[0]:
            where += " (the workspace's folders and relative PATH entries are not searched)"
        raise Unlaunchable(f"{command[0]!r}: {where}")
    argv = (program, *command[1:])
    if sandbox is not None:
        argv = tuple(sandbox.wrap(argv, roots=listed, cwd=cwd, env=env))
    return Launch(argv, env, cwd)


def terminal_environment(
    roots: Iterable[Path], inherit: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables to set for a command in an ACP client's terminal (see
    the module docstring): every credential name empty, the cleaned ``PATH``.
    ``inherit``: the environment the editor's resembles (default: this
    process's)."""
    env = os.environ if inherit is None else inherit
    names = sorted(SECRET_NAMES | {name for name in env if is_secret_name(name)})
    blanked = dict.fromkeys(names, "")
    path = clean_path(env.get("PATH", os.defpath), list(roots))
    return {**blanked, "PATH": path or clean_path(os.defpath, list(roots))}


def terminal_command(
    command: str, cwd: Path, roots: Iterable[Path], sandbox: Sandbox | None
) -> tuple[str, list[str]]:
    """The program and arguments an ACP client's terminal runs for the shell
    ``command`` in ``cwd``: ``/bin/sh -c COMMAND``, inside ``sandbox`` when
    given (the editor's environment, with :func:`terminal_environment`'s
    changes, passes through it)."""
    argv = ["/bin/sh", "-c", command]
    if sandbox is not None:
        argv = sandbox.wrap(argv, roots=list(roots), cwd=cwd, env=os.environ)
    return argv[0], argv[1:]
