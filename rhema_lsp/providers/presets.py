"""The known providers: their wire protocol, default endpoint, model and key.

A preset is data, not behaviour: :mod:`.resolve` decides which one applies,
:mod:`.wires` builds its adapter. Local presets (``ollama``, ``lmstudio``,
``llamacpp``, ``vllm``) take no vendor key; a key for them (``RHEMA_API_KEY``)
goes only to an origin listed in ``RHEMA_KEY_ORIGINS``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CUSTOM_KEY_VAR",
    "ENV_KEY_ORDER",
    "LOCAL_AUTODETECT",
    "PRESETS",
    "PROTOCOLS",
    "LocalServer",
    "Preset",
]

PROTOCOLS = ("openai", "anthropic", "gemini")
"""The wire protocols a custom ``baseUrl`` may speak."""

CUSTOM_KEY_VAR = "RHEMA_API_KEY"
"""The key variable for custom and local endpoints (sent only to bound origins)."""


@dataclass(frozen=True, slots=True)
class Preset:
    """One known provider.

    Parameters
    ----------
    name
        The preset name the ``provider`` setting uses.
    protocol
        ``"openai"``, ``"anthropic"``, ``"gemini"`` or ``"embedded"``.
    base_url
        The default endpoint (OpenAI-compatible bases include ``/v1``).
    model
        The default model id, ``""`` when the server must be asked.
    key_var
        The environment variable holding its key, ``None`` for local servers.
    """

    name: str
    protocol: str
    base_url: str
    model: str
    key_var: str | None = None

    @property
    def local(self) -> bool:
        """Whether this is a keyless local server."""
        return self.key_var is None and self.protocol != "embedded"


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset("openai", "openai", "https://api.openai.com/v1", "gpt-4.1-mini", "OPENAI_API_KEY"),
        Preset(
            "anthropic",
            "anthropic",
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
            "ANTHROPIC_API_KEY",
        ),
        Preset(
            "gemini",
            "gemini",
            "https://generativelanguage.googleapis.com",
            "gemini-2.5-flash",
            "GEMINI_API_KEY",
        ),
        Preset(
            "openrouter",
            "openai",
            "https://openrouter.ai/api/v1",
            "openrouter/auto",
            "OPENROUTER_API_KEY",
        ),
        Preset(
            "groq",
            "openai",
            "https://api.groq.com/openai/v1",
            "llama-3.3-70b-versatile",
            "GROQ_API_KEY",
        ),
        Preset("ollama", "openai", "http://127.0.0.1:11434/v1", ""),
        Preset("lmstudio", "openai", "http://127.0.0.1:1234/v1", ""),
        Preset("llamacpp", "openai", "http://127.0.0.1:8080/v1", ""),
        Preset("vllm", "openai", "http://127.0.0.1:8000/v1", ""),
        Preset("embedded", "embedded", "", "SmolLM2-135M-Instruct"),
    )
}
"""Every preset by name."""


@dataclass(frozen=True, slots=True)
class LocalServer:
    """A local server to probe: where, what is expected there, and how to name it.

    Parameters
    ----------
    preset
        The preset it is taken for when it answers.
    base_url
        The OpenAI-compatible base URL to probe (``GET {base_url}/models``).
    label
        What usually listens there, for the user ("llama.cpp's llama-server").
    owners
        ``(owned_by, preset)`` pairs: a listed model owned by ``owned_by``
        means the server is that preset instead (two servers share port 8000).
    """

    preset: str
    base_url: str
    label: str = ""
    owners: tuple[tuple[str, str], ...] = ()

    @property
    def port(self) -> str:
        """The port probed, for messages."""
        return self.base_url.split("://", 1)[-1].split("/", 1)[0].rpartition(":")[2]


LOCAL_AUTODETECT = (
    LocalServer("ollama", "http://127.0.0.1:11434/v1", "Ollama"),
    LocalServer("lmstudio", "http://127.0.0.1:1234/v1", "LM Studio"),
    LocalServer("llamacpp", "http://127.0.0.1:8080/v1", "llama.cpp's llama-server"),
    LocalServer(
        "llamacpp",
        "http://127.0.0.1:8000/v1",
        "llama-cpp-python's llama_cpp.server or vLLM",
        owners=(("vllm", "vllm"),),
    ),
)
"""Local servers probed on their default loopback port; the first that answers
wins. Port 8000 is both ``python -m llama_cpp.server``'s and vLLM's default:
vLLM says ``owned_by: vllm`` in its model list."""

ENV_KEY_ORDER = ("anthropic", "openai", "gemini", "openrouter", "groq")
"""Keyed presets tried, in this order, when their key is in the environment."""
