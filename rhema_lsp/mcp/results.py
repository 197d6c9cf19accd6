"""What the model reads of an MCP result: :func:`render_result`.

Text blocks as they are; images and audio as a note naming their type and
size; resource links as ``[resource name <uri>]`` (followable with
``read_mcp_resource``); embedded text resources in full, binary ones as a
note; structured content as JSON when there is no other content. Imports
the SDK's types: load it from :mod:`rhema_lsp.mcp.connection` only.
"""

from __future__ import annotations

import json

import mcp_types

__all__ = ["render_contents", "render_result"]

READ_RESOURCE = "read_mcp_resource"


def render_result(result: mcp_types.CallToolResult, server: str = "") -> str:
    """A call's content as the text the model reads: text as it is, images
    and audio as a note, resources as links the model may follow with
    ``read_mcp_resource`` (embedded text resources in full)."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            kind = "image" if isinstance(block, mcp_types.ImageContent) else "audio"
            size = len(block.data) * 3 // 4
            parts.append(f"[{kind} {block.mime_type}, about {size} bytes: not shown to the model]")
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
    return "\n".join(parts) if parts else "(no output)"


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
