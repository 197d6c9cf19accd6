"""What is known of a provider from its settings alone, before it is built.

Whether its model reads images (:func:`reads_images`, :func:`offers_images`)
and whether it runs on this machine (:func:`is_loopback`,
:func:`runs_here`): facts the door needs before the provider is resolved —
``rhema-lsp acp`` declares ``promptCapabilities.image`` in its first answer,
sent before anything heavy loads (:mod:`rhema_lsp.acp.handshake`) — and that
:mod:`.images` and :mod:`.resolve` decide the built provider's images with,
so both say the same.

The rules it keeps: plain data and pure functions, no I/O, no network
probe; it imports only the presets (no engine, no pydantic), so the ACP
door's early path may load it.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from rhema_lsp.providers.presets import PRESETS

__all__ = ["VISION_MARKERS", "is_loopback", "offers_images", "reads_images", "runs_here"]

VISION_MARKERS = (
    "llava",
    "bakllava",
    "vision",
    "-vl",
    "vl-",
    "vl:",
    "qwen2.5vl",
    "qwen3vl",
    "gemma3",
    "gemma-3",
    "minicpm-v",
    "moondream",
    "pixtral",
    "llama4",
    "mistral-small3.1",
    "mistral-small-3.1",
    "smolvlm",
    "internvl",
)
"""Pieces of a local model's name that say it reads images."""


def reads_images(model: str) -> bool:
    """Whether a local model's name says it reads images."""
    name = model.lower()
    return any(marker in name for marker in VISION_MARKERS)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def runs_here(name: str, protocol: str, base_url: str) -> bool:
    """Whether provider ``name`` is a local server that runs whatever model
    it was given: a keyless preset, or a custom OpenAI-compatible endpoint
    on this machine."""
    preset = PRESETS.get(name)
    if preset is not None and preset.local:
        return True
    if name != "custom" or protocol != "openai":
        return False
    try:
        host = urlsplit(base_url).hostname or ""
    except ValueError:
        return False
    return is_loopback(host)


def offers_images(
    provider: str | None,
    model: str | None,
    base_url: str | None,
    protocol: str | None,
    vision: bool | None,
) -> bool:
    """Whether the configured model may be sent images, from the settings
    alone (``None``: not set): not the embedded model, not with ``vision``
    false; a local server's model only when its name says it reads images
    (as :func:`~rhema_lsp.providers.images.image_support` decides once the
    provider is built). What is not known yet (no provider named, a local
    server whose model it will be asked for) may be sent images: the
    provider refuses them when it is built, naming why."""
    if provider == "embedded":
        return False
    if vision is not None:
        return vision
    if provider is None:
        return True
    preset = PRESETS.get(provider)
    wire = protocol or (preset.protocol if preset else "openai")
    if not runs_here(provider, wire, base_url or ""):
        return True
    name = model or (preset.model if preset else "")
    return reads_images(name) if name else True
