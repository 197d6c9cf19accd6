"""What each provider takes of images, and the pieces every wire shares.

A provider declares its :class:`~rhema_lsp.engine.ImageSupport` as its
``images`` attribute; :func:`image_support` decides it from the preset and
the model, once, when the provider is built:

- each wire's per-image limit (:data:`WIRE_LIMITS`): Anthropic 5 MB of
  base64 (3.75 MiB of image), OpenAI 20 MiB, Gemini's 20 MB request of
  inline data (15 MiB of image); an image over it is refused before the
  request, never sent to earn a 400;
- the embedded model reads no images;
- a local server (Ollama, LM Studio, llama.cpp, vLLM, or a custom
  OpenAI-compatible endpoint on this machine) runs whatever model it was
  given: it is taken to read images only when the model's name says so
  (:data:`VISION_MARKERS`: ``llava``, ``-vl``, ``vision``, ``gemma3``, ...);
- hosted providers (OpenAI, Anthropic, Gemini, OpenRouter, Groq, or a custom
  endpoint elsewhere) are sent images;
- the ``vision`` setting overrides the guess: ``true`` sends images to any
  model but the embedded one, ``false`` sends none.

Images are never resized here: an image over a limit is refused with its
size and the limit, and the user attaches a smaller copy.
"""

from __future__ import annotations

from rhema_lsp.engine import ImagePart, ImageSupport, ToolResult
from rhema_lsp.providers.known import VISION_MARKERS, reads_images

__all__ = [
    "VISION_MARKERS",
    "WIRE_LIMITS",
    "data_url",
    "image_support",
    "reads_images",
    "returned_note",
]

WIRE_LIMITS = {
    "anthropic": (5 << 20) * 3 // 4,
    "openai": 20 << 20,
    "gemini": 15 << 20,
}
"""The most one image may hold on each wire, in bytes (before base64)."""


def image_support(
    protocol: str, model: str, *, local: bool, vision: bool | None = None
) -> ImageSupport:
    """What a provider on ``protocol`` running ``model`` takes (see the
    module docstring); ``local``: a server on this machine; ``vision``: the
    setting (``None``: guess)."""
    if protocol == "embedded":
        return ImageSupport.none("the embedded model reads no images")
    if vision is False:
        return ImageSupport.none("images are turned off (the vision setting is false)")
    limit = WIRE_LIMITS.get(protocol, 0)
    if vision is None and local and not reads_images(model):
        return ImageSupport.none(
            f"the local model {model or '(unnamed)'} is not known to read images "
            "(run a vision model such as llava, qwen2.5vl or gemma3, or set the "
            "rhema.vision setting to true if this one reads them)"
        )
    return ImageSupport(limit)


def data_url(image: ImagePart) -> str:
    """``image`` as a ``data:`` URL."""
    return f"data:{image.media_type};base64,{image.data}"


def returned_note(result: ToolResult) -> str:
    """The text before the images of a tool result that a wire sends apart
    from the result itself."""
    count = len(result.images)
    images = "image" if count == 1 else f"{count} images"
    return f"(The {images} that tool call {result.id} returned, shown here as the user's.)"
