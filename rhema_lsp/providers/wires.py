"""Which adapter speaks which wire protocol."""

from __future__ import annotations

from rhema_lsp.providers.anthropic import AnthropicProvider
from rhema_lsp.providers.errors import ProviderConfigError
from rhema_lsp.providers.gemini import GeminiProvider
from rhema_lsp.providers.openai import OpenAIProvider
from rhema_lsp.providers.retry import RetryPolicy
from rhema_lsp.providers.secrets import Secret
from rhema_lsp.providers.transport import HttpStreamProvider

__all__ = ["build_http_provider"]

_FLAVOURS = {"openai": "openai", "openrouter": "openrouter"}


def build_http_provider(
    protocol: str,
    *,
    name: str,
    base_url: str,
    model: str,
    key: Secret | None,
    stall_timeout: float = 120.0,
    retry: RetryPolicy | None = None,
) -> HttpStreamProvider:
    """The adapter for ``protocol`` (``openai``, ``anthropic`` or ``gemini``).

    Raises
    ------
    ProviderConfigError
        For an unknown protocol.
    """
    if protocol == "openai":
        return OpenAIProvider(
            flavour=_FLAVOURS.get(name, "generic"),
            name=name,
            base_url=base_url,
            model=model,
            key=key,
            stall_timeout=stall_timeout,
            retry=retry,
        )
    adapters: dict[str, type[HttpStreamProvider]] = {
        "anthropic": AnthropicProvider,
        "gemini": GeminiProvider,
    }
    adapter = adapters.get(protocol)
    if adapter is None:
        raise ProviderConfigError(f"unknown protocol {protocol!r}; use openai, anthropic or gemini")
    return adapter(
        name=name,
        base_url=base_url,
        model=model,
        key=key,
        stall_timeout=stall_timeout,
        retry=retry,
    )
