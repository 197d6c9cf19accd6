"""Model providers: the engine's ``ModelProvider`` over real wires.

Three raw-httpx streaming adapters — OpenAI-compatible Chat Completions
(:mod:`.openai`), Anthropic Messages (:mod:`.anthropic`) and Gemini
(:mod:`.gemini`) — share one transport (:mod:`.transport`: timeouts, no
redirects, error mapping) and one retry ladder (:mod:`.retry`). The embedded
SmolLM2 model runs in process (:mod:`.embedded`). :func:`resolve_provider`
(:func:`choose_provider`, then :func:`build_provider`) turns editor settings
and the environment into a ready provider (:mod:`.resolve`, :mod:`.presets`),
binding each key to its origin (:mod:`.secrets`). With nothing set up,
:func:`survey_setup` lists what the user can choose from (:mod:`.setup`):
the embedded model is never chosen unless named.

Errors — every failure is the engine's ``ProviderError``::

    rhema_lsp.engine.ProviderError
    ├── ProviderConfigError     nothing usable configured, or a setting refused
    │   └── ProviderNotSetUp    nothing set up at all: carries the choices (.survey)
    ├── ProviderConnectError    unreachable, or no answer before the timeout (transient)
    ├── ProviderHTTPError       an error status; transient for 408/409/429/5xx/529
    └── ProviderStreamError     broke, stalled, malformed, or ended without its terminator

Keys never appear in messages, events, logs or reprs.
"""

from typing import TYPE_CHECKING

from rhema_lsp.lazy import lazy_root

if TYPE_CHECKING:
    from rhema_lsp.engine import ProviderError
    from rhema_lsp.providers.anthropic import AnthropicProvider
    from rhema_lsp.providers.choices import ProviderChoice, ProviderSettings, ResolvedProvider
    from rhema_lsp.providers.embedded import EmbeddedProvider, locate_embedded_model
    from rhema_lsp.providers.errors import (
        ProviderConfigError,
        ProviderConnectError,
        ProviderHTTPError,
        ProviderStreamError,
    )
    from rhema_lsp.providers.gemini import GeminiProvider
    from rhema_lsp.providers.names import EDITOR_NAMES, SettingNames
    from rhema_lsp.providers.openai import OpenAIProvider
    from rhema_lsp.providers.presets import PRESETS, Preset
    from rhema_lsp.providers.resolve import (
        LocalServer,
        build_provider,
        choose_provider,
        resolve_provider,
    )
    from rhema_lsp.providers.retry import RetryPolicy
    from rhema_lsp.providers.secrets import Secret
    from rhema_lsp.providers.setup import ProviderNotSetUp, SetupSurvey, setup_lines, survey_setup
    from rhema_lsp.providers.transport import HttpStreamProvider
    from rhema_lsp.providers.wires import build_http_provider

__all__ = [
    "EDITOR_NAMES",
    "PRESETS",
    "AnthropicProvider",
    "EmbeddedProvider",
    "GeminiProvider",
    "HttpStreamProvider",
    "LocalServer",
    "OpenAIProvider",
    "Preset",
    "ProviderChoice",
    "ProviderConfigError",
    "ProviderConnectError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderNotSetUp",
    "ProviderSettings",
    "ProviderStreamError",
    "ResolvedProvider",
    "RetryPolicy",
    "Secret",
    "SettingNames",
    "SetupSurvey",
    "build_http_provider",
    "build_provider",
    "choose_provider",
    "locate_embedded_model",
    "resolve_provider",
    "setup_lines",
    "survey_setup",
]

lazy_root(__name__)
