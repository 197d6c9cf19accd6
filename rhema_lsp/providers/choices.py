"""What provider resolution takes and gives: the data, no decision.

:class:`ProviderSettings` (the provider part of the editor settings, every
field optional), :class:`ProviderChoice` (which provider, decided but not
built: what :func:`~rhema_lsp.providers.resolve.choose_provider` answers)
and :class:`ResolvedProvider` (a ready provider and a description of it).
The rules they keep: all are frozen, and neither a ``source`` line nor a
``repr`` ever contains a key (a key is a :class:`~.secrets.Secret`, kept
out of the ``repr``). The decisions are :mod:`.resolve`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rhema_lsp.engine import ModelProvider
from rhema_lsp.providers.limits import MIN_STREAM_RATE, RESPONSE_TIMEOUT
from rhema_lsp.providers.secrets import Secret

__all__ = ["ProviderChoice", "ProviderSettings", "ResolvedProvider"]


class _ProviderFields(Protocol):
    """The provider fields of the server's settings (``runs.settings.Settings``)."""

    @property
    def provider(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def protocol(self) -> str | None: ...
    @property
    def response_timeout(self) -> float: ...
    @property
    def min_stream_rate(self) -> float: ...
    @property
    def vision(self) -> bool | None: ...


@dataclass(frozen=True)
class ProviderSettings:
    """The provider part of the editor settings; every field is optional.

    ``response_timeout`` and ``min_stream_rate`` are the ``responseTimeout``
    and ``minStreamRate`` settings (see :mod:`.limits`); ``vision`` whether
    the model reads images (``None``: decided from the provider and model,
    see :mod:`.images`).
    """

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    protocol: str | None = None
    max_retries: int = 4
    stall_timeout: float = 120.0
    response_timeout: float = RESPONSE_TIMEOUT
    min_stream_rate: float = MIN_STREAM_RATE
    vision: bool | None = None

    @classmethod
    def of(cls, settings: _ProviderFields) -> ProviderSettings:
        """The provider part of the server's settings."""
        return cls(
            provider=settings.provider,
            model=settings.model,
            base_url=settings.base_url,
            protocol=settings.protocol,
            response_timeout=settings.response_timeout,
            min_stream_rate=settings.min_stream_rate,
            vision=settings.vision,
        )


@dataclass(frozen=True)
class ProviderChoice:
    """Which provider to use, decided but not built.

    ``name`` is a preset name or ``"custom"``; ``protocol`` is a wire or
    ``"embedded"``; ``base_url`` is ``""`` for the embedded model, whose file
    is ``embedded_path``. ``source`` is one line saying why; neither it nor
    the ``repr`` ever contains a key.
    """

    name: str
    protocol: str
    model: str
    base_url: str
    source: str
    key: Secret | None = field(default=None, repr=False)
    embedded_path: Path | None = None

    def as_settings(self) -> dict[str, str]:
        """The explicit settings that make a server choose exactly this again
        (``rhema.*`` keys), without probing or listing models."""
        settings = {"provider": self.name, "model": self.model}
        if self.base_url:
            settings["baseUrl"] = self.base_url
        if self.name == "custom":
            settings["protocol"] = self.protocol
        return settings


@dataclass(frozen=True)
class ResolvedProvider:
    """A ready provider and a description of it that is safe to show.

    ``source`` is one line ("preset ollama, autodetected"); neither it nor the
    ``repr`` ever contains a key. ``context_window`` is the model's window in
    tokens (see :mod:`.windows`), ``None`` when unknown.
    """

    name: str
    protocol: str
    model: str
    base_url: str
    source: str
    provider: ModelProvider = field(repr=False)
    context_window: int | None = None
