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
  wire's reasoning effort or thinking budget).

The rules: a value not offered is refused (-32602, naming the choices);
the option list answered is always the whole list as it is after the change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import urlsplit

from acp import RequestError
from acp.schema import SessionConfigOptionSelect

from rhema_lsp.acp.errors import INVALID_PARAMS
from rhema_lsp.acp.offers import MODE, MODEL, THINKING, THINKING_LEVELS, option_entries
from rhema_lsp.engine import ProviderError
from rhema_lsp.providers import ProviderSettings, ResolvedProvider, resolve_provider
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
    mode: Mode, model: str | None, models: Sequence[str], thinking: Thinking = "default"
) -> list[SessionConfigOptionSelect]:
    """The session's options: its ``mode``, its ``model`` among ``models``
    (no model option when ``model`` is ``None``: no provider is set up) and
    its ``thinking`` level (:func:`~rhema_lsp.acp.offers.option_entries`)."""
    return [
        SessionConfigOptionSelect.model_validate(entry)
        for entry in option_entries(mode, model, models, thinking)
    ]


def mode_named(value: str) -> Mode:
    """``value`` as a mode.

    Raises
    ------
    RequestError
        It names none.
    """
    for mode in MODES:
        if mode == value:
            return mode
    raise RequestError(INVALID_PARAMS, f"unknown mode {value!r}: {', '.join(MODES)}")


def thinking_named(value: str) -> Thinking:
    """``value`` as a thinking level.

    Raises
    ------
    RequestError
        It names none.
    """
    for level in THINKING_LEVELS:
        if level == value:
            return level
    raise RequestError(
        INVALID_PARAMS, f"unknown thinking level {value!r}: {', '.join(THINKING_LEVELS)}"
    )


def _loopback(base_url: str) -> bool:
    return (urlsplit(base_url).hostname or "") in {"127.0.0.1", "localhost", "::1"}


class SessionModels:
    """The models sessions may choose, and the provider of each choice.

    ``connection_provider`` is the connection's provider (resolved once);
    a session that chose another model gets a provider resolved for it
    from the same settings, once per model.
    """

    def __init__(
        self, settings: Settings, connection_provider: Callable[[], Awaitable[ResolvedProvider]]
    ) -> None:
        self.settings = settings
        self._connection_provider = connection_provider
        self._listed: list[str] | None = None
        self._chosen: dict[str, ResolvedProvider] = {}

    async def offered(self, chosen: str | None) -> list[str]:
        """The models to offer, the current one (``chosen``, else the
        provider's) first; none when no provider is set up."""
        try:
            provider = await self._connection_provider()
        except ProviderError:
            return []
        if self._listed is None:
            local = provider.protocol == "openai" and _loopback(provider.base_url)
            self._listed = await model_ids(provider.base_url, LISTING_WAIT) if local else []
        return model_choices(chosen or provider.model, [provider.model, *self._listed])

    async def options(
        self, mode: Mode, chosen: str | None, thinking: Thinking
    ) -> list[SessionConfigOptionSelect]:
        """The session's ``configOptions``."""
        models = await self.offered(chosen)
        return config_options(mode, models[0] if models else None, models, thinking)

    async def provider(self, chosen: str | None) -> ResolvedProvider:
        """The provider of a request with the ``chosen`` model (``None``: the
        provider's own).

        Raises
        ------
        ProviderError
            None can be set up.
        """
        provider = await self._connection_provider()
        if chosen is None or chosen == provider.model:
            return provider
        if chosen not in self._chosen:
            wanted = dataclasses.replace(ProviderSettings.of(self.settings), model=chosen)
            self._chosen[chosen] = await resolve_provider(wanted)
        return self._chosen[chosen]
