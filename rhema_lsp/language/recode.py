"""Positions between the editor's encoding and a language server's.

The tools speak the editor's negotiated position encoding; the agent's own
servers are asked for UTF-16 and may answer in another. Where the two
differ, every ``{line, character}`` in a question or an answer is
converted using the text of the line it is on: the document a position
belongs to is the nearest enclosing ``uri`` / ``targetUri`` /
``textDocument.uri``, or the key of a ``WorkspaceEdit``'s ``changes``. A
position whose document cannot be read is passed on unchanged (on ASCII
lines every encoding agrees).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from rhema_lsp.tools.positions import unit_length

__all__ = ["recode_params", "recode_result"]

TextOf = Callable[[str], Awaitable[str | None]]


def _character(line: str, character: int, source: str, target: str) -> int:
    """``character`` (units of ``source`` on ``line``) in units of ``target``."""
    points = 0
    for points in range(len(line) + 1):
        if unit_length(line[:points], source) >= character:
            break
    return unit_length(line[:points], target)


async def _walk(
    node: Any,
    uri: str | None,
    source: str,
    target: str,
    lines: Callable[[str], Awaitable[list[str] | None]],
) -> Any:
    if isinstance(node, list):
        return [await _walk(item, uri, source, target, lines) for item in node]
    if not isinstance(node, Mapping):
        return node
    line, character = node.get("line"), node.get("character")
    if isinstance(line, int) and isinstance(character, int) and len(node) == 2 and uri:
        text = await lines(uri)
        if text is not None and 0 <= line < len(text):
            return {"line": line, "character": _character(text[line], character, source, target)}
        return dict(node)
    here = uri
    for key in ("uri", "targetUri"):
        if isinstance(node.get(key), str):
            here = node[key]
    document = node.get("textDocument")
    if isinstance(document, Mapping) and isinstance(document.get("uri"), str):
        here = document["uri"]
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "changes" and isinstance(value, Mapping):
            out[key] = {
                str(k): await _walk(v, str(k), source, target, lines) for k, v in value.items()
            }
        else:
            out[key] = await _walk(value, here, source, target, lines)
    return out


def _liner(
    text_of: TextOf, known: Mapping[str, str | None]
) -> Callable[[str], Awaitable[list[str] | None]]:
    cache: dict[str, list[str] | None] = {}

    async def lines(uri: str) -> list[str] | None:
        if uri not in cache:
            text = known[uri] if uri in known else await text_of(uri)
            cache[uri] = None if text is None else text.splitlines()
        return cache[uri]

    return lines


async def recode_params(
    params: Mapping[str, Any], ours: str, theirs: str, text_of: TextOf
) -> Mapping[str, Any]:
    """A question's params with positions in the server's encoding."""
    if ours == theirs:
        return params
    result: Mapping[str, Any] = await _walk(params, None, ours, theirs, _liner(text_of, {}))
    return result


async def recode_result(
    result: Any,
    theirs: str,
    ours: str,
    text_of: TextOf,
    uri: str | None = None,
    text: str | None = None,
) -> Any:
    """An answer with positions in the editor's encoding (``uri``: the
    document positions belong to when the answer does not say, with its
    ``text``)."""
    if ours == theirs:
        return result
    known = {uri: text} if uri is not None else {}
    return await _walk(result, uri, theirs, ours, _liner(text_of, known))
