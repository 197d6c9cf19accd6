"""Whether a folder's ``.mcp.json`` may be used: asked, and remembered.

A workspace file's servers would run on the user's machine, so they are only
used once the user said so for that folder **and that exact content** (its
SHA-256). :class:`WorkspaceTrust` asks once per file and hub life, one
question at a time: ``Always use them`` and ``Never`` are kept in the user
config file (:func:`~rhema_lsp.mcp.userfile.remember_workspace_answer`),
``Use them this time`` and ``Not now`` until the server exits. The answers
are :data:`~rhema_lsp.vocabulary.TRUST_CHOICES`, by which a client knows the
question is about trust: an automatic approval of actions (``rhema-lsp ask
--yes``) never answers it; headless, ``--trust-project`` answers ``Use them
this time``, for that run only.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import anyio
import anyio.to_thread

from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.userfile import WORKSPACE_FILE, UserConfig, remember_workspace_answer
from rhema_lsp.tools.editor import Editor
from rhema_lsp.vocabulary import TRUST_CHOICES

__all__ = ["ALWAYS", "NEVER", "NOT_NOW", "USE_NOW", "WorkspaceTrust"]

logger = logging.getLogger(__name__)

USE_NOW, ALWAYS, NOT_NOW, NEVER = TRUST_CHOICES


class WorkspaceTrust:
    """The user's answers about workspace files (see the module docstring).

    Parameters
    ----------
    config_path
        The user config file the lasting answers go to (default: the user's).
    """

    def __init__(self, config_path: Path | None = None) -> None:
        self.config_path = config_path
        self._answered: dict[tuple[str, str], bool] = {}
        self._asking = anyio.Lock()

    async def allowed(
        self,
        folder: Path,
        sha256: str,
        servers: Mapping[str, McpServerConfig],
        editor: Editor,
        user: UserConfig,
    ) -> bool:
        """Whether the file of ``folder`` with ``sha256`` may be used; asks
        through ``editor`` unless answered already."""
        recorded = user.answers.get(str(folder))
        if recorded is not None and recorded[0] == sha256:
            return recorded[1]
        async with self._asking:
            key = (str(folder), sha256)
            if key in self._answered:
                return self._answered[key]
            listing = "; ".join(f"{name}: {config.describe()}" for name, config in servers.items())
            answer = await editor.confirm(
                f"{folder / WORKSPACE_FILE} offers MCP servers that would run on your machine "
                f"({listing}). Use them in this folder? “Always” and “Never” are remembered "
                "until the file changes.",
                list(TRUST_CHOICES),
            )
            use = answer in (USE_NOW, ALWAYS)
            self._answered[key] = use
            if answer in (ALWAYS, NEVER):
                try:
                    await anyio.to_thread.run_sync(
                        remember_workspace_answer, folder, sha256, use, self.config_path
                    )
                except (OSError, ValueError) as exc:
                    logger.error("could not remember the answer about %s: %s", folder, exc)
            return use
