"""From editor settings and the environment to one ready provider.

Resolution order: explicit settings (``provider`` preset, or a custom
``baseUrl`` with its ``protocol``); else a local server answering on its
default loopback port within a short timeout (Ollama, LM Studio, llama.cpp);
else the first keyed preset whose key is in the environment; else the
embedded model when installed; else a :class:`ProviderConfigError` that says
how to configure one.

Keys come from ``env`` only (the server's environment), never from a file.
A preset's key is sent only to the preset's own origin or to an origin in
``RHEMA_KEY_ORIGINS``; a settings ``baseUrl`` elsewhere is refused with a
clear error rather than sent the key. Custom and local endpoints get
``RHEMA_API_KEY`` only when their origin is bound. ``source`` explains the
choice in one line and never contains a key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio
import httpx

from rhema_lsp.engine import ModelProvider
from rhema_lsp.providers.embedded import EmbeddedProvider, locate_embedded_model
from rhema_lsp.providers.errors import ProviderConfigError
from rhema_lsp.providers.presets import (
    CUSTOM_KEY_VAR,
    ENV_KEY_ORDER,
    LOCAL_AUTODETECT,
    PRESETS,
    PROTOCOLS,
    Preset,
)
from rhema_lsp.providers.retry import RetryPolicy
from rhema_lsp.providers.secrets import (
    KEY_ORIGINS_VAR,
    Secret,
    allowed_key_origins,
    check_base_url,
    is_loopback,
    origin_of,
)
from rhema_lsp.providers.windows import known_window, probe_window
from rhema_lsp.providers.wires import build_http_provider

__all__ = [
    "DETECT_TIMEOUT",
    "LocalServer",
    "ProviderSettings",
    "ResolvedProvider",
    "resolve_provider",
]

DETECT_TIMEOUT = 0.15
"""Seconds a local server gets to answer the autodetection probe."""

_MODEL_QUERY_TIMEOUT = 3.0

_HOW_TO = (
    "configure a model provider: set rhema.provider to one of "
    f"{', '.join(PRESETS)} (keys come from the server's environment: OPENAI_API_KEY, "
    "ANTHROPIC_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY), or set "
    "rhema.baseUrl with rhema.protocol (openai|anthropic|gemini) for any other endpoint, "
    "or start Ollama / LM Studio / llama.cpp on its default port, or install the "
    "embedded model with `pip install 'rhema-lsp[local]'`"
)


@dataclass(frozen=True)
class ProviderSettings:
    """The provider part of the editor settings; every field is optional."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    protocol: str | None = None
    max_retries: int = 4
    stall_timeout: float = 120.0


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


@dataclass(frozen=True, slots=True)
class LocalServer:
    """A local server to probe: a preset name and the base URL to try."""

    preset: str
    base_url: str


DEFAULT_LOCAL_SERVERS = tuple(
    LocalServer(name, PRESETS[name].base_url) for name in LOCAL_AUTODETECT
)


def _env_value(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


async def _list_models(base_url: str, wait: float) -> list[str] | None:
    """The model ids a local OpenAI-compatible server lists, or ``None`` if it
    does not answer like one within ``wait`` seconds."""
    try:
        async with httpx.AsyncClient(timeout=wait, trust_env=False) as client:
            response = await client.get(f"{base_url}/models")
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        payload = json.loads(response.content)
    except ValueError:
        return None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    return [str(item["id"]) for item in data if isinstance(item, dict) and item.get("id")]


async def _detect_local(
    servers: Sequence[LocalServer], wait: float
) -> tuple[LocalServer, list[str]] | None:
    found: dict[int, list[str]] = {}

    async def probe(position: int, server: LocalServer) -> None:
        models = await _list_models(server.base_url, wait)
        if models is not None:
            found[position] = models

    async with anyio.create_task_group() as group:
        for position, server in enumerate(servers):
            group.start_soon(probe, position, server)
    if not found:
        return None
    first = min(found)
    return servers[first], found[first]


class _Builder:
    def __init__(
        self, settings: ProviderSettings, env: Mapping[str, str], retry: RetryPolicy | None
    ) -> None:
        self.settings = settings
        self.env = env
        self.retry = retry or RetryPolicy(attempts=max(1, settings.max_retries))
        self.key_origins = allowed_key_origins(env)

    def http(
        self,
        preset_name: str,
        protocol: str,
        base_url: str,
        model: str,
        key: Secret | None,
        source: str,
    ) -> ResolvedProvider:
        provider = build_http_provider(
            protocol,
            name=preset_name,
            base_url=base_url,
            model=model,
            key=key,
            stall_timeout=self.settings.stall_timeout,
            retry=self.retry,
        )
        return ResolvedProvider(preset_name, protocol, model, base_url, source, provider)

    def bound_custom_key(self, base_url: str) -> tuple[Secret | None, str]:
        """RHEMA_API_KEY when the endpoint's origin is bound, and a note on it."""
        key = _env_value(self.env, CUSTOM_KEY_VAR)
        if key is None:
            return None, "no key"
        if origin_of(base_url) in self.key_origins:
            return Secret(key), f"key from {CUSTOM_KEY_VAR}"
        return None, (
            f"{CUSTOM_KEY_VAR} not sent: {origin_of(base_url)} is not in {KEY_ORIGINS_VAR}"
        )

    def keyed(self, preset: Preset, base_url: str | None, model: str, how: str) -> ResolvedProvider:
        assert preset.key_var is not None
        key = _env_value(self.env, preset.key_var)
        if key is None:
            raise ProviderConfigError(
                f"provider {preset.name} needs {preset.key_var} in the environment of the "
                f"process that starts rhema-lsp (it is never read from settings or files); "
                f"set it and restart the server, or {_HOW_TO}"
            )
        url = check_base_url(base_url or preset.base_url)
        own = origin_of(preset.base_url)
        origin = origin_of(url)
        if origin != own and origin not in self.key_origins:
            raise ProviderConfigError(
                f"rhema.baseUrl {url} is not {preset.name}'s own origin ({own}), so "
                f"{preset.key_var} will not be sent there. If you trust that endpoint, add "
                f"{origin} to {KEY_ORIGINS_VAR} in the server's environment; for a keyless "
                'server use rhema.provider "custom" with rhema.protocol'
            )
        protocol = self.settings.protocol or preset.protocol
        note = f"preset {preset.name}, {how}, key from {preset.key_var}"
        if base_url:
            note += ", baseUrl from settings"
        return self.http(preset.name, protocol, url, model, Secret(key), note)


async def resolve_provider(
    settings: ProviderSettings,
    env: Mapping[str, str] | None = None,
    *,
    detect_local: bool = True,
    local_servers: Sequence[LocalServer] | None = None,
    detect_timeout: float = DETECT_TIMEOUT,
    locate_embedded: Callable[[], Path | None] = locate_embedded_model,
    retry: RetryPolicy | None = None,
) -> ResolvedProvider:
    """Resolve ``settings`` to a ready provider (see the module docstring).

    Parameters
    ----------
    settings
        The provider settings from the editor.
    env
        Where keys are read from; ``os.environ`` by default.
    detect_local
        Whether to probe local servers when nothing is configured explicitly.
    local_servers
        The servers to probe, in order of preference; the default loopback
        ports of Ollama (11434), LM Studio (1234) and llama.cpp (8080).
    detect_timeout
        Seconds each probe may take.
    locate_embedded
        Finds the embedded model file, or returns ``None`` when not installed.
    retry
        The retry ladder; by default ``settings.max_retries`` attempts.

    Raises
    ------
    ProviderConfigError
        When nothing usable is configured or a setting is refused; the
        message says how to configure a provider.
    """
    resolved = await _resolve(
        settings, env, detect_local, local_servers, detect_timeout, locate_embedded, retry
    )
    return replace(resolved, context_window=await _window(resolved))


async def _window(resolved: ResolvedProvider) -> int | None:
    """The window of the resolved model: the embedded model's ``n_ctx``, a
    local server's report, else the known models' table."""
    if isinstance(resolved.provider, EmbeddedProvider):
        return resolved.provider.n_ctx
    preset = PRESETS.get(resolved.name)
    local = resolved.name == "custom" or (preset is not None and preset.local)
    if local and resolved.protocol == "openai" and is_loopback(httpx.URL(resolved.base_url).host):
        reported = await probe_window(
            resolved.base_url, resolved.model, ollama=resolved.name == "ollama"
        )
        if reported is not None:
            return reported
    return known_window(resolved.model)


async def _resolve(
    settings: ProviderSettings,
    env: Mapping[str, str] | None,
    detect_local: bool,
    local_servers: Sequence[LocalServer] | None,
    detect_timeout: float,
    locate_embedded: Callable[[], Path | None],
    retry: RetryPolicy | None,
) -> ResolvedProvider:
    env = os.environ if env is None else env
    builder = _Builder(settings, env, retry)
    name = (settings.provider or "").strip().lower() or None
    wanted_model = (settings.model or "").strip() or None
    protocol = (settings.protocol or "").strip().lower() or None
    if protocol is not None and protocol not in PROTOCOLS:
        raise ProviderConfigError(
            f"rhema.protocol {settings.protocol!r} is not one of {', '.join(PROTOCOLS)}"
        )
    if name == "custom" or (name is None and settings.base_url):
        return await _custom(builder, settings.base_url, protocol, wanted_model)
    if name is not None:
        preset = PRESETS.get(name)
        if preset is None:
            raise ProviderConfigError(f"rhema.provider {settings.provider!r} is unknown; {_HOW_TO}")
        return await _explicit(builder, preset, settings.base_url, wanted_model, locate_embedded)
    if detect_local:
        servers = DEFAULT_LOCAL_SERVERS if local_servers is None else tuple(local_servers)
        detected = await _detect_local(servers, detect_timeout)
        if detected is not None:
            server, models = detected
            model = wanted_model or (models[0] if models else "")
            if model:
                key, note = builder.bound_custom_key(server.base_url)
                return builder.http(
                    server.preset,
                    "openai",
                    server.base_url,
                    model,
                    key,
                    f"preset {server.preset}, autodetected at {server.base_url}, {note}",
                )
    for preset_name in ENV_KEY_ORDER:
        preset = PRESETS[preset_name]
        assert preset.key_var is not None
        if _env_value(env, preset.key_var) is not None:
            return builder.keyed(preset, None, wanted_model or preset.model, "key in environment")
    path = locate_embedded()
    if path is not None:
        return _embedded(path, wanted_model, "installed, used because nothing else is configured")
    raise ProviderConfigError(f"no model provider found; {_HOW_TO}")


async def _custom(
    builder: _Builder, base_url: str | None, protocol: str | None, model: str | None
) -> ResolvedProvider:
    if not base_url:
        raise ProviderConfigError(
            'rhema.provider "custom" needs rhema.baseUrl (e.g. http://127.0.0.1:8080/v1) '
            "and rhema.protocol (openai|anthropic|gemini)"
        )
    url = check_base_url(base_url)
    if protocol is None:
        raise ProviderConfigError(
            f"rhema.baseUrl {url} needs rhema.protocol: one of {', '.join(PROTOCOLS)} "
            "(openai for Ollama, LM Studio, llama.cpp, vLLM and most other servers)"
        )
    if model is None and protocol != "gemini":
        listing = url if protocol == "openai" else f"{url}/v1"
        models = await _list_models(listing, _MODEL_QUERY_TIMEOUT)
        model = models[0] if models else None
    if model is None:
        raise ProviderConfigError(f"set rhema.model: the endpoint {url} needs a model name")
    key, note = builder.bound_custom_key(url)
    return builder.http("custom", protocol, url, model, key, f"custom baseUrl ({protocol}), {note}")


async def _explicit(
    builder: _Builder,
    preset: Preset,
    base_url: str | None,
    model: str | None,
    locate_embedded: Callable[[], Path | None],
) -> ResolvedProvider:
    if preset.protocol == "embedded":
        path = locate_embedded()
        if path is None:
            raise ProviderConfigError(
                "the embedded model is not installed: run `pip install 'rhema-lsp[local]'` "
                "in the server's environment, or choose another rhema.provider"
            )
        return _embedded(path, model, "from settings")
    if preset.key_var is not None:
        return builder.keyed(preset, base_url, model or preset.model, "from settings")
    url = check_base_url(base_url or preset.base_url)
    if model is None:
        models = await _list_models(url, _MODEL_QUERY_TIMEOUT)
        if not models:
            raise ProviderConfigError(
                f"{preset.name} at {url} did not list any model; start it, or set rhema.model"
            )
        model = models[0]
    key, note = builder.bound_custom_key(url)
    return builder.http(
        preset.name,
        preset.protocol,
        url,
        model,
        key,
        f"preset {preset.name}, from settings, {note}",
    )


def _embedded(path: Path, model: str | None, how: str) -> ResolvedProvider:
    provider = EmbeddedProvider(path)
    return ResolvedProvider(
        "embedded",
        "embedded",
        model or PRESETS["embedded"].model,
        "",
        f"preset embedded ({path.name}), {how}",
        provider,
    )
