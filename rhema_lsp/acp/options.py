"""A session's options changed, by whichever route: applied, kept and told.

An ACP client changes a session's mode with ``session/set_mode`` (Zed) or
``session/set_config_option`` (CodeCompanion, and Zed's model and thinking
pickers), and a client may show both pickers at once. Every route goes
through :meth:`SessionOptions.change`, the one place that keeps the rules:

- the value is checked against what the option offers (-32602 naming the
  choices, the session unchanged);
- a mode change sends ``current_mode_update``, and every change sends
  ``config_option_update`` with the whole option list as it is after it, so
  every picker the client shows follows, whoever changed it;
- the session's choices are written to its store as soon as it is stored
  (a new session's on its first prompt), so a session reopened through
  either door (ACP load or resume, the language server's turns) goes on
  with them;
- a client that declares boolean options (``session.configOptions.boolean``)
  is offered ``network`` too (``type: boolean``, after the others): whether
  the session's sandboxed commands reach the network (the
  ``sandboxNetwork`` setting, for this session on this connection; not
  kept in the store). No other client sees it or can set it.
"""

from __future__ import annotations

import logging
from typing import Protocol

from acp.schema import (
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
)

from rhema_lsp.acp.config import (
    MODE,
    MODEL,
    THINKING,
    SessionModels,
    mode_named,
    thinking_named,
)
from rhema_lsp.acp.errors import BadParams
from rhema_lsp.acp.offers import WORKTREE
from rhema_lsp.acp.sessions import AcpSession
from rhema_lsp.acp.worktrees import change_worktree
from rhema_lsp.runs.choices import with_choices
from rhema_lsp.runs.settings import Settings
from rhema_lsp.sessions import StoredChoices

__all__ = ["NETWORK", "ConfigOptions", "SessionOptions", "keep_choices", "restore_choices"]

logger = logging.getLogger(__name__)

NETWORK = "network"
"""The id of the boolean option: sandboxed commands reach the network."""

ConfigOptions = list[SessionConfigOptionSelect | SessionConfigOptionBoolean]
"""A session's ``configOptions``, as ACP answers them."""


class _Updates(Protocol):
    async def session_update(
        self, session_id: str, update: ConfigOptionUpdate | CurrentModeUpdate
    ) -> None: ...


async def keep_choices(session: AcpSession) -> None:
    """Write ``session``'s choices to its store (nothing before it is stored).

    Raises
    ------
    SessionStoreError
        The store cannot be written.
    """
    if not session.stored:
        return
    choices = StoredChoices(mode=session.mode, model=session.model, thinking=session.thinking)
    await session.store.choices.save(session.id, choices)


async def restore_choices(session: AcpSession, agent: Settings) -> None:
    """Take up the choices stored with ``session``, by the one rule of
    :func:`~rhema_lsp.runs.choices.with_choices` (a value no longer valid
    is left at the agent's setting, with a line in the log).

    Raises
    ------
    SessionStoreError
        The store cannot be read.
    """
    stored = await session.store.choices.load(session.id)
    chosen = with_choices(session.settings(agent), stored)
    session.mode, session.thinking = chosen.mode, chosen.thinking
    if stored.model:
        session.model = chosen.model


class SessionOptions:
    """The option list of each session, and every change to it."""

    def __init__(self, models: SessionModels) -> None:
        self.models = models

    async def listed(self, session: AcpSession) -> ConfigOptions:
        """``session``'s ``configOptions``."""
        worktree = session.worktree if session.booleans else None  # booleans: to who takes them
        options: ConfigOptions = list(
            await self.models.options(session.mode, session.model, session.thinking, worktree)
        )
        if session.booleans:
            network = session.settings(self.models.settings).sandbox_network
            options.append(
                SessionConfigOptionBoolean(
                    id=NETWORK,
                    name="Network for commands",
                    description="Sandboxed commands may reach the network",
                    type="boolean",
                    current_value=network,
                )
            )
        return options

    async def change(
        self, session: AcpSession, config_id: str, value: str | bool, client: _Updates
    ) -> ConfigOptions:
        """Set ``config_id`` to ``value`` (see the module docstring); the
        option list after the change.

        Raises
        ------
        BadParams
            An unknown option or value (the session unchanged).
        SessionStoreError
            The store cannot be written.
        """
        if config_id == WORKTREE:
            change_worktree(session, value)
        elif config_id == NETWORK and session.booleans and isinstance(value, bool):
            session.network = value
        elif not isinstance(value, str) or config_id not in (MODE, MODEL, THINKING):
            named = f", {NETWORK} (true or false)" if session.booleans else ""
            raise BadParams(
                f"unknown option {config_id!r} (or value {value!r}): "
                f"options {MODE}, {MODEL}, {THINKING}, {WORKTREE}{named}",
            )
        elif config_id == MODE:
            session.mode = mode_named(value)
        elif config_id == THINKING:
            session.thinking = thinking_named(value)
        else:
            offered = await self.models.offered(session.model)
            if value not in offered:
                raise BadParams(f"unknown model {value!r}: {', '.join(offered) or 'none set up'}")
            session.model = value
        await keep_choices(session)
        if config_id == MODE:
            await client.session_update(
                session.id,
                CurrentModeUpdate(
                    session_update="current_mode_update", current_mode_id=session.mode
                ),
            )
        options = await self.listed(session)
        await client.session_update(
            session.id,
            ConfigOptionUpdate(session_update="config_option_update", config_options=options),
        )
        return options
