"""Images for the tests: real PNG bytes of any size, and the images a
request body carries on each wire, decoded (so a test can compare bytes)."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

__all__ = ["images_sent", "png"]


def png(width: int = 3, height: int = 2, extra: bytes = b"") -> bytes:
    """A real PNG of ``width`` x ``height`` red pixels (``extra``: an
    ancillary text chunk, to make it as large as a test needs)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + bytes([255, 0, 0] * width) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    text = chunk(b"tEXt", b"pad\x00" + extra) if extra else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + text
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def images_sent(wire: str, body: dict[str, Any]) -> list[tuple[str, bytes]]:
    """Every image of a request body as (media type, decoded bytes), in
    order, wherever ``wire`` puts them (tool results included)."""
    found: list[tuple[str, bytes]] = []
    if wire == "openai":
        for message in body["messages"]:
            content = message.get("content")
            if message["role"] == "user" and isinstance(content, list):
                for part in content:
                    if part["type"] == "image_url":
                        head, data = part["image_url"]["url"].split(",", 1)
                        assert head.endswith(";base64"), head
                        found.append((head[5:].split(";")[0], base64.b64decode(data)))
    elif wire == "anthropic":
        for message in body["messages"]:
            for block in message["content"]:
                inner = block.get("content") if block["type"] == "tool_result" else [block]
                for item in inner if isinstance(inner, list) else []:
                    if item["type"] == "image":
                        source = item["source"]
                        assert source["type"] == "base64", source
                        found.append((source["media_type"], base64.b64decode(source["data"])))
    else:
        for content in body["contents"]:
            for part in content["parts"]:
                if "inline_data" in part:
                    inline = part["inline_data"]
                    found.append((inline["mime_type"], base64.b64decode(inline["data"])))
    return found
