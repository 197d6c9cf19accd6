"""A session's configuration options, as ACP clients show and set them.

CodeCompanion switches modes and models only through ``configOptions``, and
Zed shows a model picker only for an agent that offers a ``model`` option;
``session/set_mode`` alone is not enough for them. Each session offers:

- ``mode`` (category ``mode``): ``ask``, ``edit``, ``agent``, the same tool
  sets as the session modes; changing it here or with ``session/set_mode``
  is one change (both routes send ``current_mode_update`` and
  ``config_option_update``, so every client's picker follows);
- ``model`` (category ``model``), when a provider is set up: the current
  model first, then the others its server lists (an OpenAI-compatible
  server on this machine, read once per connection with a short wait;
  hosted providers list their configured model only). The session's next
  request uses the chosen model;
- ``thinking`` (category ``thought_level``): how much the model reasons,
  the levels of the ``thinking`` setting (``default`` sends nothing, the
  server's own default stands; ``low``, ``medium``, ``high`` become each
  wire's reasoning effort or thinking budget);
- ``worktree`` (a boolean): whether a new session runs in its own git
  worktree (:mod:`~rhema_lsp.acp.worktrees`).

The rules: a value not offered is refused (-32602, naming the choices);
the option list answered is always the whole list as it is after the change.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import urlsplit

from acp.schema import SessionConfigOptionBoolean, SessionConfigOptionSelect

from rhema_lsp.acp.errors import BadParams
from rhema_lsp.acp.offers import MODE, MODEL, THINKING, THINKING_LEVELS, option_entries
from rhema_lsp.engine import ProviderError
from rhema_lsp.providers import ResolvedProvider
from rhema_lsp.providers.known import is_loopback
from rhema_lsp.providers.local import model_ids
from rhema_lsp.runs.settings import Settings, Thinking
from rhema_lsp.vocabulary import MODES, Mode

__all__ = [
    "MODE",
    "MODEL",
    "THINKING",
    "THINKING_LEVELS",
    "SessionModels",
    "config_options",
    "mode_named",
    "model_choices",
    "thinking_named",
]

LISTING_WAIT = 1.0
"""Seconds to wait for a local server's model list."""


def model_choices(current: str, listed: Sequence[str]) -> list[str]:
    """The models to offer: ``current`` first, then the rest ``listed``, once each."""
    return list(dict.fromkeys([current, *listed]))


def config_options(
    mode: Mode,
    model: str | None,
    models: Sequence[str],
    thinking: Thinking = "default",
    worktree: bool | None = None,
) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The session's options: its ``mode``, its ``model`` among ``models``
    (no model option when ``model`` is ``None``: no provider is set up) and
    its ``thinking`` level (:func:`~rhema_lsp.acp.offers.option_entries`)."""
    return [
        SessionConfigOptionBoolean.model_validate(entry)
        if entry["type"] == "boolean"
        else SessionConfigOptionSelect.model_validate(entry)
        for entry in option_entries(mode, model, models, thinking, worktree)
    ]


def mode_named(value: str) -> Mode:
    """``value`` as a mode.

    Raises
    ------
    BadParams
        It names none.
    """
    for mode in MODES:
        if mode == value:
            return mode
    raise BadParams(f"unknown mode {value!r}: {', '.join(MODES)}")


def thinking_named(value: str) -> Thinking:
    """``value`` as a thinking level.

    Raises
    ------
    BadParams
        It names none.
    """
    for level in THINKING_LEVELS:
        if level == value:
            return level
    raise BadParams(f"unknown thinking level {value!r}: {', '.join(THINKING_LEVELS)}")


class SessionModels:
    """The models sessions may choose, and the provider of each choice.

    ``provider`` is the door kit's provider cache
    (:class:`~rhema_lsp.runs.backends.Backends`): ``None``, the
    connection's provider; a model, the same provider for that model.
    """

    def __init__(
        self,
        settings: Settings,
        provider: Callable[[str | None], Awaitable[ResolvedProvider]],
    ) -> None:
        self.settings = settings
        self._provider = provider
        self._listed: list[str] | None = None

    async def offered(self, chosen: str | None) -> list[str]:
        """The models to offer, the current one (``chosen``, else the
        provider's) first; none when no provider is set up."""
        try:
            provider = await self._provider(None)
        except ProviderError:
            return []
        if self._listed is None:
            host = urlsplit(provider.base_url).hostname or ""
            local = provider.protocol == "openai" and is_loopback(host)
            self._listed = await model_ids(provider.base_url, LISTING_WAIT) if local else []
        return model_choices(chosen or provider.model, [provider.model, *self._listed])

    async def options(
        self, mode: Mode, chosen: str | None, thinking: Thinking, worktree: bool | None = None
    ) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
        """The session's ``configOptions``."""
        models = await self.offered(chosen)
        return config_options(mode, models[0] if models else None, models, thinking, worktree)

    async def provider(self, chosen: str | None) -> ResolvedProvider:
        """The provider of a request with the ``chosen`` model (``None``: the
        provider's own).

        Raises
        ------
        ProviderError
            None can be set up.
        """
        return await self._provider(chosen)
