"""Images in the conversation: what an image is, and what a model takes.

:func:`image_part` makes an :class:`~.messages.ImagePart` from bytes, or
refuses them (:func:`image_from_base64` from the base64 every door receives,
decoded here once for every door): the type is read from the bytes' signature (PNG, JPEG, GIF,
WebP), never from a name, and nothing larger than :data:`IMAGE_MAX_BYTES`
is taken in. A provider declares what it takes with an
:class:`ImageSupport` (the ``images`` attribute of a provider that has one,
see :func:`support_of`; a provider without says nothing, and is sent
images). Two rules keep every path the same:

- a prompt's new images that the model cannot take are refused before any
  request (:func:`refusal`, the turn pipeline asks it);
- images already in the history that it cannot take (an MCP screenshot, an
  earlier turn's image after a change of model) are replaced in the request
  by a note naming them (:func:`fit_images`, every request crosses it), so a
  conversation never becomes unsendable.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from rhema_lsp.engine.messages import ImagePart, Message, TextPart, ToolResult

__all__ = [
    "IMAGE_MAX_BYTES",
    "IMAGE_TYPES",
    "ImageRefused",
    "ImageSupport",
    "SeesImages",
    "fit_images",
    "image_from_base64",
    "image_part",
    "refusal",
    "sniff_image",
    "support_of",
]

IMAGE_MAX_BYTES = 20 << 20
"""The largest image taken in at all (20 MiB, the most any wire accepts)."""

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The media types taken in."""


class ImageRefused(ValueError):
    """Bytes that are not an image this project takes, or too many of them;
    the message says which and what to do."""


def sniff_image(data: bytes) -> str | None:
    """The media type ``data``'s signature says, ``None`` when it is none of
    :data:`IMAGE_TYPES`."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_part(data: bytes, name: str = "") -> ImagePart:
    """``data`` as an image part named ``name``.

    Raises
    ------
    ImageRefused
        ``data`` is not a PNG, JPEG, GIF or WebP image, or is larger than
        :data:`IMAGE_MAX_BYTES`.
    """
    shown = name or "the image"
    if len(data) > IMAGE_MAX_BYTES:
        raise ImageRefused(
            f"{shown} is {len(data)} bytes, over the {IMAGE_MAX_BYTES >> 20} MiB an image may "
            "hold; attach a smaller or downscaled copy"
        )
    media_type = sniff_image(data)
    if media_type is None:
        raise ImageRefused(
            f"{shown} is not a PNG, JPEG, GIF or WebP image (its first bytes say otherwise)"
        )
    return ImagePart(
        media_type=media_type,
        data=base64.b64encode(data).decode("ascii"),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        name=name,
    )


@dataclass(frozen=True, slots=True)
class ImageSupport:
    """What a model takes of images.

    Parameters
    ----------
    max_bytes
        The most one image may hold for this wire; ``0``: no images at all.
    why
        Why none, for the refusal ("the embedded model reads no images").
    """

    max_bytes: int
    why: str = ""

    @classmethod
    def none(cls, why: str) -> ImageSupport:
        """A model that takes no image, and why."""
        return cls(0, why)

    def problem(self, image: ImagePart) -> str | None:
        """Why ``image`` cannot be sent, ``None`` when it can."""
        if self.max_bytes <= 0:
            return self.why or "this model takes no images"
        if image.size > self.max_bytes:
            return (
                f"{image.size} bytes is over the {_mib(self.max_bytes)} this provider takes "
                "per image"
            )
        return None


ANY = ImageSupport(IMAGE_MAX_BYTES)


@runtime_checkable
class SeesImages(Protocol):
    """A provider that declares what it takes of images."""

    @property
    def images(self) -> ImageSupport: ...


def image_from_base64(data: str, name: str) -> ImagePart:
    """The image whose bytes ``data`` holds as base64, named ``name``.

    Raises
    ------
    ImageRefused
        ``data`` is not valid base64, or its bytes are refused by
        :func:`image_part`.
    """
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImageRefused(f"{name}: `data` is not base64 ({exc})") from exc
    return image_part(raw, name)


def support_of(provider: object) -> ImageSupport:
    """What ``provider`` declares (see :class:`SeesImages`); one that does
    not declare is sent images up to :data:`IMAGE_MAX_BYTES`."""
    return provider.images if isinstance(provider, SeesImages) else ANY


def refusal(images: Sequence[ImagePart], support: ImageSupport) -> str | None:
    """Why a prompt with ``images`` cannot go to the model, ``None`` when it can."""
    for image in images:
        problem = support.problem(image)
        if problem is not None:
            return (
                f"image {image.name or image.media_type} not sent: {problem}; "
                "choose a provider and model that read images, or send the prompt without it"
            )
    return None


def _note(image: ImagePart, problem: str) -> str:
    return f"[image {image.label}: not shown to the model ({problem})]"


def fit_images(messages: list[Message], support: ImageSupport) -> list[Message]:
    """``messages`` with each image ``support`` does not take replaced by a
    note (the same list when every image fits)."""
    out: list[Message] | None = None
    for index, message in enumerate(messages):
        fitted = _fit_message(message, support)
        if fitted is not message:
            if out is None:
                out = list(messages[:index])
            out.append(fitted)
        elif out is not None:
            out.append(message)
    return messages if out is None else out


def _fit_message(message: Message, support: ImageSupport) -> Message:
    changed = False
    content: list[object] = []
    for part in message.content:
        if isinstance(part, ImagePart):
            problem = support.problem(part)
            if problem is not None:
                content.append(TextPart(text=_note(part, problem)))
                changed = True
                continue
        elif isinstance(part, ToolResult) and part.images:
            kept, notes = [], []
            for image in part.images:
                problem = support.problem(image)
                if problem is None:
                    kept.append(image)
                else:
                    notes.append(_note(image, problem))
            if notes:
                text = "\n".join([part.content, *notes])
                part = part.model_copy(update={"images": tuple(kept), "content": text})
                changed = True
        content.append(part)
    return message.model_copy(update={"content": content}) if changed else message


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.2g} MiB"
