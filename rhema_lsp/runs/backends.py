"""The provider cache of a front door: each provider resolved once.

``runs`` does not import ``providers``: a door hands :class:`Backends` the
two functions that do (``key``: the provider part of the settings, which
says when a provider must be resolved again; ``resolve``: resolving it), and
gets back :class:`~rhema_lsp.runs.workplace.Backend`\\ s. Its rules, the same
through every door: the settings' provider is resolved once per provider
settings (callers at the same time, a status and a turn, share one
resolution); a session's chosen model other than that provider's is
resolved once per model, from the same settings with that model; a failure
is not kept (the next call tries again); new provider settings drop every
provider resolved for the old ones.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

import anyio

from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.workplace import Backend

__all__ = ["Backends"]

K = TypeVar("K", bound=Hashable)
B = TypeVar("B", bound=Backend)


class Backends(Generic[K, B]):
    """The providers of one door (see the module docstring).

    Parameters
    ----------
    key
        The provider part of the settings (hashable).
    resolve
        Resolves it; raises :class:`~rhema_lsp.engine.ProviderError` when
        none can be set up.
    """

    def __init__(self, key: Callable[[Settings], K], resolve: Callable[[K], Awaitable[B]]) -> None:
        self._key = key
        self._resolve = resolve
        self._lock = anyio.Lock()
        self._current: K | None = None
        self._resolved: dict[K, B] = {}

    async def of(self, settings: Settings, model: str | None = None) -> B:
        """The provider ``settings`` name; with ``model`` (a session's
        choice) other than its own, the same provider for that model.

        Raises
        ------
        ProviderError
            None can be set up from the settings and the environment.
        """
        async with self._lock:
            own = self._key(settings)
            if own != self._current:
                self._resolved.clear()
                self._current = own
            provider = await self._get(own)
            if model is None or model == provider.model:
                return provider
            return await self._get(self._key(settings.model_copy(update={"model": model})))

    async def _get(self, key: K) -> B:
        provider = self._resolved.get(key)
        if provider is None:
            provider = self._resolved[key] = await self._resolve(key)
        return provider
