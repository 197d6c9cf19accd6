"""From editor settings and the environment to one ready provider.

Resolution order: explicit settings (``provider`` preset, or a custom
``baseUrl`` with its ``protocol``); else a local server answering on its
default loopback port within a short timeout (Ollama 11434, LM Studio 1234,
llama.cpp's ``llama-server`` 8080, ``llama_cpp.server`` or vLLM 8000) and
listing a model; else the first keyed preset whose key is in the
environment; else a :class:`ProviderConfigError` listing every choice
(:mod:`.setup`). The embedded demo model is never chosen by itself: only
``provider: embedded`` names it.

Resolution is two steps: :func:`choose_provider` decides (and may probe the
network), :func:`build_provider` makes the adapter; :func:`resolve_provider`
does both (the data they take and give: :mod:`.choices`). A client can
choose up front (the headless client does, to fail before a session
exists) and hand the choice on as explicit settings.
Messages name the settings the way the caller's user writes them
(:class:`SettingNames`: ``rhema.baseUrl`` in an editor, ``--base-url`` in a
terminal).

Keys come from ``env`` only (the server's environment), never from a file.
A preset's key is sent only to the preset's own origin or to an origin in
``RHEMA_KEY_ORIGINS``; a settings ``baseUrl`` elsewhere is refused with a
clear error rather than sent the key. Custom and local endpoints get
``RHEMA_API_KEY`` only when their origin is bound. ``source`` explains the
choice in one line and never contains a key.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import httpx

from rhema_lsp.engine import ModelProvider
from rhema_lsp.providers.choices import ProviderChoice, ProviderSettings, ResolvedProvider
from rhema_lsp.providers.embedded import EMBEDDED_NOTE, EmbeddedProvider, locate_embedded_model
from rhema_lsp.providers.errors import ProviderConfigError
from rhema_lsp.providers.images import image_support
from rhema_lsp.providers.known import is_loopback, runs_here
from rhema_lsp.providers.limits import ResponseLimits
from rhema_lsp.providers.local import DETECT_TIMEOUT, find_local_servers, model_ids, port_list
from rhema_lsp.providers.names import EDITOR_NAMES, SettingNames
from rhema_lsp.providers.presets import (
    CUSTOM_KEY_VAR,
    ENV_KEY_ORDER,
    LOCAL_AUTODETECT,
    PRESETS,
    PROTOCOLS,
    LocalServer,
    Preset,
)
from rhema_lsp.providers.retry import RetryPolicy
from rhema_lsp.providers.secrets import (
    KEY_ORIGINS_VAR,
    Secret,
    allowed_key_origins,
    check_base_url,
    origin_of,
)
from rhema_lsp.providers.setup import ProviderNotSetUp, build_survey
from rhema_lsp.providers.windows import known_window, probe_window
from rhema_lsp.providers.wires import build_http_provider

__all__ = [
    "DETECT_TIMEOUT",
    "EDITOR_NAMES",
    "LocalServer",
    "ProviderChoice",
    "ProviderSettings",
    "ResolvedProvider",
    "SettingNames",
    "build_provider",
    "choose_provider",
    "resolve_provider",
]

_MODEL_QUERY_TIMEOUT = 3.0

DEFAULT_LOCAL_SERVERS = LOCAL_AUTODETECT


def _env_value(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


class _Chooser:
    def __init__(self, env: Mapping[str, str], names: SettingNames) -> None:
        self.env = env
        self.names = names
        self.key_origins = allowed_key_origins(env)

    def base_url(self, url: str) -> str:
        return check_base_url(url, setting=self.names.base_url)

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

    def keyed(
        self, preset: Preset, base_url: str | None, model: str, protocol: str | None, how: str
    ) -> ProviderChoice:
        assert preset.key_var is not None
        key = _env_value(self.env, preset.key_var)
        if key is None:
            raise ProviderConfigError(
                f"provider {preset.name} needs its key: "
                f"{self.names.set_key.format(var=preset.key_var)}"
            )
        url = self.base_url(base_url or preset.base_url)
        own = origin_of(preset.base_url)
        origin = origin_of(url)
        if origin != own and origin not in self.key_origins:
            raise ProviderConfigError(
                f"{self.names.base_url} {url} is not {preset.name}'s own origin ({own}), so "
                f"{preset.key_var} will not be sent there. If you trust that endpoint, add "
                f"{origin} to {KEY_ORIGINS_VAR} in the environment; for a keyless server use "
                f"{self.names.provider} custom with {self.names.protocol}"
            )
        note = f"preset {preset.name}, {how}, key from {preset.key_var}"
        if base_url:
            note += f", {self.names.base_url} given"
        return ProviderChoice(
            preset.name, protocol or preset.protocol, model, url, note, Secret(key)
        )


async def choose_provider(
    settings: ProviderSettings,
    env: Mapping[str, str] | None = None,
    *,
    names: SettingNames = EDITOR_NAMES,
    detect_local: bool = True,
    local_servers: Sequence[LocalServer] | None = None,
    detect_timeout: float = DETECT_TIMEOUT,
    locate_embedded: Callable[[], Path | None] = locate_embedded_model,
) -> ProviderChoice:
    """Decide which provider ``settings`` mean (see the module docstring).

    Parameters
    ----------
    settings
        The provider settings.
    env
        Where keys are read from; ``os.environ`` by default.
    names
        How messages name the settings (the editor's by default).
    detect_local
        Whether to probe local servers when nothing is configured explicitly.
    local_servers
        The servers to probe, in order of preference; by default
        :data:`~rhema_lsp.providers.presets.LOCAL_AUTODETECT`.
    detect_timeout
        Seconds each probe may take.
    locate_embedded
        Finds the embedded model file, or returns ``None`` when not installed.

    Raises
    ------
    ProviderNotSetUp
        When nothing is configured and nothing was found: it lists the choices.
    ProviderConfigError
        When a setting is refused or cannot work; the message says how to fix
        it, in ``names``.
    """
    env = os.environ if env is None else env
    chooser = _Chooser(env, names)
    name = (settings.provider or "").strip().lower() or None
    wanted_model = (settings.model or "").strip() or None
    protocol = (settings.protocol or "").strip().lower() or None
    if protocol is not None and protocol not in PROTOCOLS:
        raise ProviderConfigError(
            f"{names.protocol} {settings.protocol!r} is not one of {', '.join(PROTOCOLS)}"
        )
    if name == "custom" or (name is None and settings.base_url):
        return await _custom(chooser, settings.base_url, protocol, wanted_model)
    if name is not None:
        preset = PRESETS.get(name)
        if preset is None:
            raise ProviderConfigError(
                f"{names.provider} {settings.provider!r} is unknown: pick one of "
                f"{', '.join(PRESETS)} (custom takes {names.base_url} and {names.protocol})"
            )
        return await _explicit(
            chooser, preset, settings.base_url, wanted_model, protocol, locate_embedded
        )
    servers = LOCAL_AUTODETECT if local_servers is None else tuple(local_servers)
    nothing_local = f"no local server answered on port {port_list(servers)}" if servers else ""
    answered = await find_local_servers(servers, detect_timeout) if detect_local else []
    if not detect_local:
        nothing_local = "local servers not probed"
    for server, listing in answered:
        preset_name = next(
            (preset for owner, preset in server.owners if owner in listing.owners),
            server.preset,
        )
        model = wanted_model or (listing.models[0] if listing.models else "")
        if model:
            key, note = chooser.bound_custom_key(server.base_url)
            what = f"{server.label} answered" if server.label else "answered"
            return ProviderChoice(
                preset_name,
                "openai",
                model,
                server.base_url,
                f"preset {preset_name}, autodetected: {what} at {server.base_url} "
                f"(no {names.provider} set), {note}",
                key,
            )
    if answered:
        nothing_local = "no local server listed a model"
    for preset_name in ENV_KEY_ORDER:
        preset = PRESETS[preset_name]
        assert preset.key_var is not None
        if _env_value(env, preset.key_var) is not None:
            how = f"key in environment (no {names.provider} set; {nothing_local})"
            return chooser.keyed(preset, None, wanted_model or preset.model, None, how)
    survey = build_survey(answered, env, configured=False, demo_path=locate_embedded())
    raise ProviderNotSetUp(survey, names)


def build_provider(
    choice: ProviderChoice,
    settings: ProviderSettings = ProviderSettings(),  # noqa: B008 -- frozen
    retry: RetryPolicy | None = None,
) -> ResolvedProvider:
    """Make the adapter ``choice`` names.

    Parameters
    ----------
    choice
        What :func:`choose_provider` decided.
    settings
        Where the retry count, the stall timeout and the response limits come from.
    retry
        The retry ladder; by default ``settings.max_retries`` attempts.
    """
    if choice.protocol == "embedded":
        assert choice.embedded_path is not None
        provider: ModelProvider = EmbeddedProvider(choice.embedded_path)
    else:
        provider = build_http_provider(
            choice.protocol,
            name=choice.name,
            base_url=choice.base_url,
            model=choice.model,
            key=choice.key,
            stall_timeout=settings.stall_timeout,
            retry=retry or RetryPolicy(attempts=max(1, settings.max_retries)),
            limits=ResponseLimits(
                response_timeout=settings.response_timeout, min_rate=settings.min_stream_rate
            ),
            images=image_support(
                choice.protocol, choice.model, local=_runs_here(choice), vision=settings.vision
            ),
        )
    return ResolvedProvider(
        choice.name, choice.protocol, choice.model, choice.base_url, choice.source, provider
    )


def _runs_here(choice: ProviderChoice) -> bool:
    """Whether ``choice`` is a local server that runs whatever model it was
    given: a keyless preset, or a custom OpenAI-compatible endpoint on this
    machine."""
    return runs_here(choice.name, choice.protocol, choice.base_url)


async def resolve_provider(
    settings: ProviderSettings,
    env: Mapping[str, str] | None = None,
    *,
    names: SettingNames = EDITOR_NAMES,
    detect_local: bool = True,
    local_servers: Sequence[LocalServer] | None = None,
    detect_timeout: float = DETECT_TIMEOUT,
    locate_embedded: Callable[[], Path | None] = locate_embedded_model,
    retry: RetryPolicy | None = None,
) -> ResolvedProvider:
    """Resolve ``settings`` to a ready provider: :func:`choose_provider`, then
    :func:`build_provider`; the parameters are theirs.

    Raises
    ------
    ProviderConfigError
        When nothing usable is configured or a setting is refused; the
        message says how to configure a provider.
    """
    choice = await choose_provider(
        settings,
        env,
        names=names,
        detect_local=detect_local,
        local_servers=local_servers,
        detect_timeout=detect_timeout,
        locate_embedded=locate_embedded,
    )
    resolved = build_provider(choice, settings, retry)
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


async def _custom(
    chooser: _Chooser, base_url: str | None, protocol: str | None, model: str | None
) -> ProviderChoice:
    names = chooser.names
    if not base_url:
        raise ProviderConfigError(
            f"{names.provider} custom needs {names.base_url} (e.g. http://127.0.0.1:8080/v1) "
            f"and {names.protocol} (openai, anthropic or gemini)"
        )
    url = chooser.base_url(base_url)
    if protocol is None:
        raise ProviderConfigError(
            f"{names.base_url} {url} needs {names.protocol}: one of {', '.join(PROTOCOLS)} "
            "(openai for Ollama, LM Studio, llama.cpp, vLLM and most other servers)"
        )
    if model is None and protocol != "gemini":
        listing = url if protocol == "openai" else f"{url}/v1"
        models = await model_ids(listing, _MODEL_QUERY_TIMEOUT)
        model = models[0] if models else None
    if model is None:
        raise ProviderConfigError(
            f"set {names.model}: the endpoint {url} did not list a model to default to"
        )
    key, note = chooser.bound_custom_key(url)
    return ProviderChoice(
        "custom", protocol, model, url, f"custom {names.base_url} ({protocol}), {note}", key
    )


async def _explicit(
    chooser: _Chooser,
    preset: Preset,
    base_url: str | None,
    model: str | None,
    protocol: str | None,
    locate_embedded: Callable[[], Path | None],
) -> ProviderChoice:
    names = chooser.names
    if preset.protocol == "embedded":
        if base_url:
            raise ProviderConfigError(
                f"{names.base_url} does not apply to {names.provider} embedded: "
                "the embedded model runs in process"
            )
        path = locate_embedded()
        if path is None:
            raise ProviderConfigError(
                "the embedded model is not installed: run `pip install 'rhema-lsp[local]'` "
                f"in rhema-lsp's environment, or choose another {names.provider}"
            )
        return _embedded(path, model, f"from {names.provider}")
    if preset.key_var is not None:
        return chooser.keyed(
            preset, base_url, model or preset.model, protocol, f"from {names.provider}"
        )
    url = chooser.base_url(base_url or preset.base_url)
    if model is None:
        models = await model_ids(url, _MODEL_QUERY_TIMEOUT)
        if not models:
            raise ProviderConfigError(
                f"{preset.name} at {url} did not answer with a model list: start it there, "
                f"or point {names.base_url} at it, or name the model with {names.model}"
            )
        model = models[0]
    key, note = chooser.bound_custom_key(url)
    return ProviderChoice(
        preset.name,
        preset.protocol,
        model,
        url,
        f"preset {preset.name}, from {names.provider}, {note}",
        key,
    )


def _embedded(path: Path, model: str | None, how: str) -> ProviderChoice:
    return ProviderChoice(
        "embedded",
        "embedded",
        model or PRESETS["embedded"].model,
        "",
        f"preset embedded ({path.name}), {how}; {EMBEDDED_NOTE}",
        embedded_path=path,
    )
