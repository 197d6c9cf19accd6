"""Which MCP servers a run wants, and from where.

Where servers come from, in order (a name seen earlier wins):

1. the ``mcpServers`` setting (the editor's **user** settings);
2. ``mcpServers`` in the user config file (:mod:`rhema_lsp.mcp.userfile`);
3. the servers the client passes for the session (an ACP editor's own, from
   ``session/new``; :meth:`~rhema_lsp.mcp.config.McpServerConfig.given`):
   they run in the session folder, every call asks, and their values are
   used as given (no expansion). Each lives until the hub closes; sessions
   of a folder passing the same entry share it;
4. the session folder's ``.mcp.json``, only after the user confirmed that
   exact file for that folder (asked once; "Always use them" and "Never" are
   kept in the user config file, "Use them this time" and "Not now" until
   the server exits). Its servers run in the
   folder, with nothing allow-listed or safe and no environment expansion.

A name seen earlier wins (logged), a ``disabled`` entry is dropped by the
hub (:class:`~rhema_lsp.mcp.hub.McpHub`), which starts what is wanted.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import anyio.to_thread

from rhema_lsp.mcp.config import McpServerConfig, Placeholders
from rhema_lsp.mcp.trust import WorkspaceTrust
from rhema_lsp.mcp.userfile import (
    WORKSPACE_FILE,
    UserConfig,
    read_user_config,
    read_workspace_file,
)
from rhema_lsp.tools.editor import Editor

__all__ = [
    "PLACEHOLDERS",
    "McpOptions",
    "Source",
    "Wanted",
    "from_client",
    "from_settings",
    "from_workspace",
    "user_config",
]

logger = logging.getLogger("rhema_lsp.mcp.hub")
"""The hub's logger: what it wants is the hub's business."""

Source = Literal["settings", "user config", "client", "workspace"]
PLACEHOLDERS: dict[Source, Placeholders] = {"client": "keep", "workspace": "refuse"}
"""What ``${NAME}`` does in a value, by where the server comes from (else: expand)."""


class McpOptions(Protocol):
    """The settings the hub reads (``Settings`` has them)."""

    @property
    def mcp_servers(self) -> Mapping[str, McpServerConfig]: ...

    @property
    def mcp_modes(self) -> Sequence[str]: ...

    @property
    def mcp_start_timeout(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Wanted:
    """One server a run wants: its name, where it comes from, its entry and
    (for a client's or a workspace's server) the folder it runs in."""

    name: str
    source: Source
    config: McpServerConfig
    folder: Path | None = None

    @property
    def key(self) -> str:
        """Its connection's key: one per name, folder and (for a client's
        server) entry."""
        if self.source == "client":
            digest = hashlib.sha256(self.config.model_dump_json().encode()).hexdigest()[:16]
            return f"{self.folder}#client#{self.name}#{digest}"
        return self.name if self.folder is None else f"{self.folder}#{self.name}"


def from_settings(options: McpOptions, user: UserConfig) -> list[Wanted]:
    """The servers of the settings, then those of the user config file."""
    wanted = [Wanted(n, "settings", c) for n, c in options.mcp_servers.items()]
    seen = set(options.mcp_servers)
    wanted += [Wanted(n, "user config", c) for n, c in user.servers.items() if n not in seen]
    return wanted


def from_client(
    folder: Path, given: Mapping[str, McpServerConfig], taken: set[str]
) -> list[Wanted]:
    """The servers the client passed, but those of a name ``taken``."""
    wanted = []
    for name, config in given.items():
        if name in taken:
            logger.info(
                "MCP server %s the client passed is also in your own configuration, which wins",
                name,
            )
            continue
        wanted.append(Wanted(name, "client", config, folder))
    return wanted


async def user_config(config_path: Path | None) -> UserConfig:
    """The user config file, read in a worker thread; its problems logged."""
    user = await anyio.to_thread.run_sync(read_user_config, config_path)
    for problem in user.problems:
        logger.warning("%s", problem)
    return user


async def from_workspace(
    trust: WorkspaceTrust, folder: Path, editor: Editor, user: UserConfig, taken: set[str]
) -> list[Wanted]:
    """The servers of ``folder``'s ``.mcp.json`` if the user trusts that
    file (asked through ``editor``), but those of a name ``taken``."""
    found = await anyio.to_thread.run_sync(read_workspace_file, folder)
    if found is None:
        return []
    for problem in found.problems:
        logger.warning("%s", problem)
    if not found.servers:
        return []
    if not await trust.allowed(folder, found.sha256, found.servers, editor, user):
        return []
    wanted = []
    for name, config in found.servers.items():
        if name in taken:
            logger.warning(
                "%s: server %s is also in your own configuration, which wins",
                folder / WORKSPACE_FILE,
                name,
            )
            continue
        wanted.append(Wanted(name, "workspace", config, folder))
    return wanted
