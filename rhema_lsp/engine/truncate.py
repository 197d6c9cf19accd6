"""The per-result cap: a tool result never exceeds :data:`TOOL_RESULT_CAP`
bytes of UTF-8. Longer results keep their head (two thirds of the cap) and
tail (a quarter), cut on character boundaries, around a marker that tells the
model how much was elided and to narrow its request, so it re-queries instead
of silently losing the tail."""

from __future__ import annotations

__all__ = ["TOOL_RESULT_CAP", "truncate_tool_result"]

TOOL_RESULT_CAP = 24_000


def _floor_boundary(data: bytes, at: int) -> int:
    at = min(at, len(data))
    while 0 < at < len(data) and (data[at] & 0xC0) == 0x80:
        at -= 1
    return at


def _ceil_boundary(data: bytes, at: int) -> int:
    at = max(0, min(at, len(data)))
    while at < len(data) and (data[at] & 0xC0) == 0x80:
        at += 1
    return at


def truncate_tool_result(content: str, cap: int = TOOL_RESULT_CAP) -> str:
    """Cap ``content`` at ``cap`` bytes of UTF-8, keeping head and tail.

    Parameters
    ----------
    content
        The full result text.
    cap
        The byte budget; results within it come back unchanged.

    Returns
    -------
    str
        ``content`` itself, or its head, an elision marker and its tail.
    """
    data = content.encode("utf-8")
    if len(data) <= cap:
        return content
    head_end = _floor_boundary(data, cap * 2 // 3)
    tail_start = _ceil_boundary(data, len(data) - cap // 4)
    elided = tail_start - head_end
    return (
        data[:head_end].decode("utf-8")
        + f"\n[... truncated {elided} bytes — narrow the request (offset/limit, "
        "path or pattern filters) and retry ...]\n" + data[tail_start:].decode("utf-8")
    )
