"""A ``session/prompt``'s content blocks as the user message the model reads.

Text blocks are the prompt, in order; two adjacent blocks that meet without
white space are kept apart by a line break (a client's ``/file`` note and the
question after it are two thoughts, not one word). Embedded resources (``resource`` blocks, sent
when the agent declares ``embeddedContext``) are the editor's text of a file
or selection: they are attached as context exactly as the LSP server
attaches ``context`` buffers (:func:`~rhema_lsp.runs.prompts.render_context`).
Resource links name files the model may read with its tools: each stays
in the text where the user put it, and is listed after it. Images, audio
and binary resources are not understood by every provider: each is replaced
by a note saying it was left out, so the model does not pretend to see it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from rhema_lsp.runs.prompts import ContextPiece, render_context
from rhema_lsp.tools import uri_to_path

__all__ = ["PromptBlock", "user_text"]

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


def user_text(blocks: Sequence[PromptBlock], cwd: Path) -> str:
    """The user message for ``blocks``; paths shown relative to ``cwd``."""
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
            notes.append("(an image was attached; this agent cannot see images, it was left out)")
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
