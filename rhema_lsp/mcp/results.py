"""What the model reads of an MCP result: :func:`render_result`.

Text blocks as they are; images as image parts that go with the result
(:mod:`rhema_lsp.engine.images`: checked by their bytes, a block that is not
one is a note), named in the text; audio as a note naming its type and
size; resource links as ``[resource name <uri>]`` (followable with
``read_mcp_resource``); embedded text resources in full, binary ones as a
note; structured content as JSON when there is no other content. Imports
the SDK's types: load it from :mod:`rhema_lsp.mcp.connection` only.
"""

from __future__ import annotations

import base64
import binascii
import json

import mcp_types

from rhema_lsp.engine import ImagePart, image_part

__all__ = ["render_contents", "render_result"]

READ_RESOURCE = "read_mcp_resource"


def _image(block: mcp_types.ImageContent) -> ImagePart | str:
    """The block's image, or why it is not one (a note for the model)."""
    try:
        return image_part(base64.b64decode(block.data, validate=True), "")
    except (binascii.Error, ValueError) as exc:  # ImageRefused is a ValueError
        size = len(block.data) * 3 // 4
        return f"[image {block.mime_type}, about {size} bytes: not shown to the model ({exc})]"


def render_result(
    result: mcp_types.CallToolResult, server: str = ""
) -> tuple[str, tuple[ImagePart, ...]]:
    """A call's content as the text the model reads, and its images: text as
    it is, each image named in the text (the image itself goes with the
    result), audio as a note, resources as links the model may follow with
    ``read_mcp_resource`` (embedded text resources in full)."""
    parts: list[str] = []
    images: list[ImagePart] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            image = _image(block)
            if isinstance(image, str):
                parts.append(image)
            else:
                images.append(image)
                parts.append(f"[image {image.media_type}, {image.size} bytes: attached]")
        elif isinstance(block, mcp_types.AudioContent):
            size = len(block.data) * 3 // 4
            parts.append(f"[audio {block.mime_type}, about {size} bytes: not shown to the model]")
        elif isinstance(block, mcp_types.ResourceLink):
            about = f": {block.description}" if block.description else ""
            follow = f"; {READ_RESOURCE} server={server!r} reads it" if server else ""
            parts.append(f"[resource {block.name} <{block.uri}>{about}{follow}]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                parts.append(f"[resource <{resource.uri}>]\n{resource.text}")
            else:
                parts.append(
                    f"[resource <{resource.uri}> ({resource.mime_type or 'binary'}): not shown]"
                )
        else:
            parts.append(f"[{getattr(block, 'type', 'content')}: not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    return ("\n".join(parts) if parts else "(no output)"), tuple(images)


def render_contents(result: mcp_types.ReadResourceResult) -> str:
    """A read resource as the text the model reads: text contents in full,
    binary ones as a note naming their type and size."""
    parts: list[str] = []
    for content in result.contents:
        if isinstance(content, mcp_types.TextResourceContents):
            parts.append(content.text)
        else:
            size = len(content.blob) * 3 // 4
            kind = content.mime_type or "binary"
            parts.append(f"[<{content.uri}> ({kind}, about {size} bytes): not shown to the model]")
    return "\n".join(parts) if parts else "(empty)"
