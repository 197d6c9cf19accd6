"""Images in the engine: typed by their bytes, refused for a model that
cannot take them, replaced by a note in the history, counted in estimates,
and round-tripped through JSON."""

from __future__ import annotations

import pytest

from rhema_lsp.engine import (
    IMAGE_MAX_BYTES,
    ImagePart,
    ImageRefused,
    ImageSupport,
    Message,
    Role,
    TextPart,
    ToolResult,
    fit_images,
    image_part,
    refusal,
    sniff_image,
    support_of,
)
from rhema_lsp.engine.budget import IMAGE_BYTES, message_bytes

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"GIF89a...", "image/gif"),
        (b"GIF87a...", "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", None),
        (b"<svg xmlns=...>", None),
        (b"", None),
        (b"\x89PNG", None),
    ],
)
def test_the_type_is_read_from_the_bytes(data: bytes, kind: str | None) -> None:
    assert sniff_image(data) == kind


def test_an_image_part_keeps_its_bytes_hash_and_size() -> None:
    part = image_part(PNG, "shot.png")
    assert part.raw() == PNG
    assert part.size == len(PNG) and len(part.sha256) == 64
    again = Message.model_validate_json(
        Message(role=Role.USER, content=[TextPart(text="hi"), part]).model_dump_json()
    )
    assert again.images == [part]


def test_bytes_that_are_no_image_or_too_many_are_refused() -> None:
    with pytest.raises(ImageRefused, match="not a PNG, JPEG, GIF or WebP"):
        image_part(b"hello", "x.png")
    with pytest.raises(ImageRefused, match="over the 20 MiB"):
        image_part(PNG + b"\x00" * IMAGE_MAX_BYTES, "big.png")


def test_a_prompt_image_a_model_cannot_take_is_refused_with_the_reason() -> None:
    part = image_part(PNG, "shot.png")
    assert refusal([part], ImageSupport(1000)) is None
    none = refusal([part], ImageSupport.none("the embedded model reads no images"))
    assert none is not None and "shot.png" in none and "reads no images" in none
    small = refusal([part], ImageSupport(10))
    assert small is not None and "per image" in small


def test_history_images_a_model_cannot_take_become_notes() -> None:
    part = image_part(PNG, "shot.png")
    result = ToolResult(id="c1", content="took a screenshot", images=(part,))
    history = [
        Message(role=Role.USER, content=[TextPart(text="look"), part]),
        Message(role=Role.TOOL, content=[result]),
    ]
    assert fit_images(history, ImageSupport(1000)) is history
    fitted = fit_images(history, ImageSupport.none("no eyes"))
    assert fitted[0].images == [] and "shot.png" in fitted[0].text and "no eyes" in fitted[0].text
    [kept] = fitted[1].tool_results
    assert kept.images == () and "took a screenshot" in kept.content and "no eyes" in kept.content
    assert history[0].images == [part]  # the history itself is untouched


def test_an_image_is_counted_as_a_fixed_size_not_its_base64() -> None:
    part = image_part(PNG * 1000, "big.png")
    with_image = message_bytes(Message(role=Role.USER, content=[part]))
    assert IMAGE_BYTES <= with_image < IMAGE_BYTES + 100


def test_a_provider_that_declares_nothing_is_sent_images() -> None:
    class Plain:
        pass

    class Blind:
        images = ImageSupport.none("blind")

    assert support_of(Plain()).max_bytes == IMAGE_MAX_BYTES
    assert support_of(Blind()).max_bytes == 0
    assert isinstance(image_part(PNG), ImagePart)
