"""A ``session/prompt``'s content blocks as the user message the model reads.

Text blocks are the prompt, in order; two adjacent blocks that meet without
white space are kept apart by a line break (a client's ``/file`` note and the
question after it are two thoughts, not one word). Embedded resources (``resource`` blocks, sent
when the agent declares ``embeddedContext``) are the editor's text of a file
or selection: they are attached as context exactly as the LSP server
attaches ``context`` buffers (:func:`~rhema_lsp.runs.prompts.render_context`).
Resource links name files the model may read with its tools: each stays
in the text where the user put it, and is listed after it. Image blocks
(the agent declares ``promptCapabilities.image``) are the prompt's images,
in order, checked by their bytes like every image
(:func:`~rhema_lsp.engine.image_from_base64`, as every door decodes them: a
block that is not valid base64 or
not a PNG, JPEG, GIF or WebP image refuses the prompt with
:class:`~rhema_lsp.engine.ImageRefused`); whether the model reads them is
the turn pipeline's one check. Audio and binary resources are replaced by a
note saying they were left out, so the model does not pretend to see them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from rhema_lsp.engine import ImagePart, image_from_base64
from rhema_lsp.runs.prompts import ContextPiece, render_context
from rhema_lsp.tools import uri_to_path

__all__ = ["PromptBlock", "UserPrompt", "user_prompt"]

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def _shown(uri: str, cwd: Path) -> str:
    if not uri.startswith("file:"):
        return uri
    path = uri_to_path(uri)
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _append_apart(words: list[str], text: str, separator: str) -> None:
    """Append ``text``, with ``separator`` first when it would touch the
    previous piece (neither side white space)."""
    if words and text and words[-1] and not words[-1][-1].isspace() and not text[0].isspace():
        words.append(separator)
    words.append(text)


@dataclass(frozen=True, slots=True)
class UserPrompt:
    """A prompt as the model reads it: its text, and its images."""

    text: str
    images: tuple[ImagePart, ...] = ()


def _image(block: ImageContentBlock, number: int) -> ImagePart:
    name = _shown(block.uri, Path()) if block.uri else f"image {number}"
    return image_from_base64(block.data, name)


def user_prompt(blocks: Sequence[PromptBlock], cwd: Path) -> UserPrompt:
    """The user message for ``blocks``; paths shown relative to ``cwd``.

    Raises
    ------
    ImageRefused
        An image block is not an image (see the module docstring).
    """
    images = [
        _image(block, number)
        for number, block in enumerate(
            (b for b in blocks if isinstance(b, ImageContentBlock)), start=1
        )
    ]
    return UserPrompt(_user_text(blocks, cwd), tuple(images))


def _user_text(blocks: Sequence[PromptBlock], cwd: Path) -> str:
    words: list[str] = []
    links: list[str] = []
    pieces: list[ContextPiece] = []
    notes: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            _append_apart(words, block.text, "\n")
        elif isinstance(block, ResourceContentBlock):
            link = _shown(block.uri, cwd)
            links.append(link)
            _append_apart(words, f"`{link}`", " ")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                pieces.append(ContextPiece(path=_shown(resource.uri, cwd), text=resource.text))
            else:
                notes.append(f"(a binary attachment, {_shown(resource.uri, cwd)}, was left out)")
        elif isinstance(block, ImageContentBlock):
            continue  # an image of the prompt (see user_prompt)
        else:
            notes.append("(an audio clip was attached; it was left out)")
    parts = ["".join(words).strip()] if any(w.strip() for w in words) else []
    if links:
        listed = "\n".join(f"- {link}" for link in links)
        parts.append(f"Files the user pointed to (read them with read_file):\n{listed}")
    if pieces:
        parts.append(render_context(pieces))
    parts.extend(notes)
    return "\n\n".join(parts)
