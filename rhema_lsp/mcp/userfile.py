"""The user's own MCP configuration file, and the workspace's ``.mcp.json``.

``<user config dir>/rhema-lsp/config.json`` (platformdirs; ``$XDG_CONFIG_HOME``
on Linux) holds ``mcpServers`` and ``languageServers`` for every client that
has no settings UI of its own (the headless ``rhema-lsp``, ACP editors), and
the user's answers about workspace files::

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}},
     "languageServers": {"python": {"command": ["pylsp"]}},
     "workspaceMcp": {"/abs/folder": {"sha256": "...", "use": true}}}

A workspace's ``.mcp.json`` is only ever *offered*: it is used once the user
said yes for that folder **and that exact content** (its SHA-256), so a
later commit that changes the file asks again. Its entries lose ``allow`` and
``safe``. Reads and writes here are blocking: call them in a worker thread.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from platformdirs import user_config_dir

from rhema_lsp.mcp.config import McpServerConfig, parse_servers

__all__ = [
    "WORKSPACE_FILE",
    "UserConfig",
    "WorkspaceFile",
    "read_user_config",
    "read_workspace_file",
    "remember_workspace_answer",
    "user_config_path",
    "user_language_options",
    "user_language_servers",
]

logger = logging.getLogger(__name__)

WORKSPACE_FILE = ".mcp.json"
_MAX_BYTES = 1 << 20


def user_config_path() -> Path:
    """Where the user config file lives."""
    return Path(user_config_dir("rhema-lsp", appauthor=False)) / "config.json"


@dataclass(frozen=True, slots=True)
class UserConfig:
    """What the user config file says (empty when there is none)."""

    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    answers: dict[str, tuple[str, bool]] = field(default_factory=dict)
    """Per folder: the SHA-256 of the ``.mcp.json`` answered, and whether to use it."""
    problems: list[str] = field(default_factory=list)
    language_servers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """``languageServers``: a command per language id or family."""
    language_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``languageServers``: their ``initializationOptions``, where given."""


@dataclass(frozen=True, slots=True)
class WorkspaceFile:
    """A folder's ``.mcp.json``: its hash and its servers (made untrusted)."""

    folder: Path
    sha256: str
    servers: dict[str, McpServerConfig]
    problems: list[str]


def _load_json(path: Path) -> Any:
    with path.open("rb") as handle:
        data = handle.read(_MAX_BYTES + 1)
    if len(data) > _MAX_BYTES:
        raise ValueError("larger than 1 MiB")
    return json.loads(data)


def read_user_config(path: Path | None = None) -> UserConfig:
    """Read the user config file; a missing file is an empty config, a broken
    one is reported in ``problems`` and ignored."""
    target = path or user_config_path()
    try:
        raw = _load_json(target)
    except FileNotFoundError:
        return UserConfig()
    except (OSError, ValueError) as exc:
        return UserConfig(problems=[f"{target}: {exc}; ignored"])
    if not isinstance(raw, dict):
        return UserConfig(problems=[f"{target}: expected a JSON object; ignored"])
    servers, problems = parse_servers(raw.get("mcpServers", {}))
    answers: dict[str, tuple[str, bool]] = {}
    recorded = raw.get("workspaceMcp", {})
    if isinstance(recorded, dict):
        for folder, answer in recorded.items():
            if isinstance(answer, dict) and isinstance(answer.get("sha256"), str):
                answers[str(folder)] = (answer["sha256"], answer.get("use") is True)
    languages, refused = _language_servers(raw.get("languageServers", {}))
    entries = raw.get("languageServers")
    options = {
        str(language): entry["initializationOptions"]
        for language, entry in (entries.items() if isinstance(entries, dict) else ())
        if language in languages
        and isinstance(entry, dict)
        and isinstance(entry.get("initializationOptions"), dict)
    }
    return UserConfig(
        servers=servers,
        answers=answers,
        problems=[f"{target}: {where}: {message}" for where, message in problems]
        + [f"{target}: {message}" for message in refused],
        language_servers=languages,
        language_options=options,
    )


def _language_servers(raw: object) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """``languageServers``' commands, and a line for each entry left out."""
    if not isinstance(raw, dict):
        return {}, ["languageServers: expected an object; ignored"]
    commands: dict[str, tuple[str, ...]] = {}
    refused: list[str] = []
    for language, entry in raw.items():
        command = entry.get("command") if isinstance(entry, dict) else None
        if (
            isinstance(command, list)
            and command
            and all(isinstance(part, str) and part for part in command)
        ):
            commands[str(language)] = tuple(command)
        else:
            refused.append(
                f'languageServers.{language}: expected {{"command": [program, args...]}}; ignored'
            )
    return commands, refused


def user_language_servers(path: Path | None = None) -> dict[str, tuple[str, ...]]:
    """The user config file's ``languageServers`` (blocking); each of its
    problems is logged once."""
    config = read_user_config(path)
    for problem in config.problems:
        if "languageServers" in problem and problem not in _REPORTED:
            _REPORTED.add(problem)
            logger.warning("%s", problem)
    return config.language_servers


def user_language_options(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The user config file's ``languageServers`` ``initializationOptions``
    (blocking)."""
    return read_user_config(path).language_options


_REPORTED: set[str] = set()


def read_workspace_file(folder: Path) -> WorkspaceFile | None:
    """The folder's ``.mcp.json``, or ``None`` when it has none."""
    target = folder / WORKSPACE_FILE
    try:
        with target.open("rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError as exc:
        return WorkspaceFile(folder, "", {}, [f"{target}: {exc}"])
    digest = hashlib.sha256(data).hexdigest()
    try:
        raw = json.loads(data) if len(data) <= _MAX_BYTES else None
    except ValueError as exc:
        return WorkspaceFile(folder, digest, {}, [f"{target}: {exc}"])
    if not isinstance(raw, dict):
        return WorkspaceFile(folder, digest, {}, [f"{target}: expected a JSON object"])
    servers, problems = parse_servers(raw.get("mcpServers", {}))
    return WorkspaceFile(
        folder,
        digest,
        {name: config.untrusted() for name, config in servers.items()},
        [f"{target}: {where}: {message}" for where, message in problems],
    )


def remember_workspace_answer(
    folder: Path, sha256: str, use: bool, path: Path | None = None, *, key: str = "workspaceMcp"
) -> None:
    """Record the user's answer about ``folder``'s ``.mcp.json`` (under
    ``key``: another workspace file's, ``workspaceHooks``) in the user
    config file, keeping everything else in it (written atomically).

    Raises
    ------
    OSError
        The file cannot be written; ``ValueError`` when it is not JSON (it is
        never overwritten then).
    """
    target = path or user_config_path()
    try:
        raw = _load_json(target)
    except FileNotFoundError:
        raw = {}
    if not isinstance(raw, dict):
        raise ValueError(f"{target} is not a JSON object; not overwriting it")
    recorded = raw.get(key)
    if not isinstance(recorded, dict):
        recorded = {}
    recorded[str(folder)] = {"sha256": sha256, "use": use}
    raw[key] = recorded
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".config-", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(raw, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    logger.info("remembered %s for %s (%s)", "use" if use else "ignore", folder, key)
