"""Which adapter speaks which wire protocol."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from rhema_lsp.engine import ImageSupport
from rhema_lsp.providers.anthropic import AnthropicProvider
from rhema_lsp.providers.errors import ProviderConfigError
from rhema_lsp.providers.gemini import GeminiProvider
from rhema_lsp.providers.limits import ResponseLimits
from rhema_lsp.providers.openai import OpenAIProvider
from rhema_lsp.providers.retry import RetryPolicy
from rhema_lsp.providers.secrets import Secret
from rhema_lsp.providers.transport import HttpStreamProvider

__all__ = ["build_http_provider"]

_FLAVOURS = ("openai", "openrouter")
"""Presets whose name is also the OpenAI adapter's ``flavour``; others are ``generic``."""


def build_http_provider(
    protocol: str,
    *,
    name: str,
    base_url: str,
    model: str,
    key: Secret | None,
    stall_timeout: float = 120.0,
    retry: RetryPolicy | None = None,
    limits: ResponseLimits | None = None,
    images: ImageSupport | None = None,
) -> HttpStreamProvider:
    """The adapter for ``protocol`` (``openai``, ``anthropic`` or ``gemini``).

    Raises
    ------
    ProviderConfigError
        For an unknown protocol.
    """
    adapter: Callable[..., HttpStreamProvider]
    if protocol == "openai":
        adapter = partial(OpenAIProvider, flavour=name if name in _FLAVOURS else "generic")
    elif protocol == "anthropic":
        adapter = AnthropicProvider
    elif protocol == "gemini":
        adapter = GeminiProvider
    else:
        raise ProviderConfigError(f"unknown protocol {protocol!r}; use openai, anthropic or gemini")
    return adapter(
        name=name,
        base_url=base_url,
        model=model,
        key=key,
        stall_timeout=stall_timeout,
        retry=retry,
        limits=limits,
        images=images,
    )
