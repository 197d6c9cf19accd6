"""Learned event shapes: exact fast decoding of a stream's repetitive delta events.

A streamed answer is thousands of events that are byte-for-byte identical
except for one JSON string (the text) and, on some wires, a few integers (a
cumulative usage tally). Parsing every event in full dominates the cost of a
stream, so a decoder parses the first such event in full, then *learns* its
shape with :meth:`EventShape.learn`: the exact bytes before the first hole,
and a regular expression for the rest in which the text token becomes a JSON
string pattern and each chosen integer token an integer pattern, every other
byte literal. Later events that match the shape are decoded from the match.

Why this is exact. JSON's grammar depends on the kinds of its tokens, never
on a string's or an integer's value. An event matching the shape is the learned
event with one string token replaced by another *valid* JSON string token
(the pattern admits exactly the strict JSON string syntax: no raw control
character, only the legal escapes) and integer tokens replaced by integer
tokens (a literal byte after each one can never continue a number, since the
learned token was scanned whole). So it parses to the learned value with those
leaves replaced by the decoded token values, and a decoder's handling of it is
its handling of that value. The text token is decoded exactly as the full
parse decodes it: UTF-8 (a token is bounded by ASCII quotes, and an invalid
sequence makes the fast path decline so the full parse raises its usual
error), then :func:`json.decoder.scanstring`, the function the JSON scanner
itself uses, whenever the token holds an escape. Learning verifies all of this
on a probe before trusting a shape: it substitutes a sentinel string (escapes,
non-ASCII, a surrogate pair) and sentinel integers, parses the probe in full
and requires exactly the learned value with those leaves replaced (which also
rules out a hole that a later duplicate key would override). Anything that
does not match a learned shape takes the full parse.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["EventShape", "JsonPath", "ShapeLearner"]

JsonPath = tuple[str | int, ...]
"""Keys and indices from a JSON document's root to one of its values."""

# Strict JSON string and integer tokens, on bytes (bytes >= 0x80 are UTF-8, checked on decode).
_STRING = rb'"((?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*)"'
_INTEGER = rb"(-?(?:0|[1-9][0-9]*))"
_INTEGER_TOKEN = re.compile(_INTEGER)
_WHITESPACE = " \t\n\r"
_SENTINEL_TEXT = 'é\\"\n\x01/\U0001f600 \u2028 end'  # escaped as a surrogate pair
_SENTINEL_INT_BASE = 7_919_000_001

# The C string scanner the JSON decoder itself uses (typeshed omits it).
scanstring: Callable[..., tuple[str, int]] = getattr(json.decoder, "scanstring")  # noqa: B009

# The C scanner json.loads uses, for one leaf value at a position.
_scan_value: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]


class EventShape:
    """The shape of one learned event; see the module docstring.

    Use :meth:`learn` to build one; :meth:`match` then :meth:`text` and
    :meth:`integer` to decode a later event.
    """

    __slots__ = ("_int_groups", "_prefix", "_prefix_len", "_rest", "_text_group", "event")

    def __init__(
        self,
        event: str | None,
        prefix: bytes,
        rest: re.Pattern[bytes],
        text_group: int,
        int_groups: dict[JsonPath, int],
    ) -> None:
        self.event = event
        self._prefix = prefix
        self._prefix_len = len(prefix)
        self._rest = rest
        self._text_group = text_group
        self._int_groups = int_groups

    @classmethod
    def learn(
        cls,
        event: str | None,
        data: bytes,
        value: Any,
        text_path: JsonPath,
        int_paths: Callable[[JsonPath], bool] = lambda path: False,
    ) -> EventShape | None:
        """The shape of ``data``, or ``None`` when it cannot be learned exactly.

        Parameters
        ----------
        event
            The SSE event name the shape requires.
        data
            The event's data, exactly as received.
        value
            ``data`` fully parsed (what :func:`~rhema_lsp.providers.transport.parse_json`
            returned for it).
        text_path
            Where the text string is; it becomes the string hole.
        int_paths
            Which integer leaves may vary (each becomes an integer hole).
        """
        try:
            text = data.decode("utf-8")
            leaves: list[tuple[JsonPath, int, int]] = []
            end = _walk(text, _skip(text, 0), (), leaves)
        except (ValueError, IndexError, StopIteration):
            return None
        if text[end:].strip(_WHITESPACE):
            return None
        holes: list[tuple[int, int, JsonPath | None]] = []  # span; int path, None for text
        for leaf_path, start, stop in leaves:
            token = text[start:stop]
            if leaf_path == text_path and token.startswith('"'):
                holes.append((start, stop, None))
            elif int_paths(leaf_path) and _INTEGER_TOKEN.fullmatch(token.encode()):
                holes.append((start, stop, leaf_path))
        if sum(1 for hole in holes if hole[2] is None) != 1:
            return None
        spans = [
            (len(text[:start].encode()), len(text[:stop].encode()), path)
            for start, stop, path in holes
        ]
        first = spans[0][0]
        pattern = b""
        cursor = first
        text_group = 0
        int_groups: dict[JsonPath, int] = {}
        for group, (start, stop, path) in enumerate(spans, start=1):
            pattern += re.escape(data[cursor:start])
            if path is None:
                pattern += _STRING
                text_group = group
            else:
                pattern += _INTEGER
                int_groups[path] = group
            cursor = stop
        pattern += re.escape(data[cursor:])
        shape = cls(event, data[:first], re.compile(pattern, re.DOTALL), text_group, int_groups)
        return shape if shape._verified(data, spans, value, text_path) else None

    def _verified(
        self,
        data: bytes,
        spans: list[tuple[int, int, JsonPath | None]],
        value: Any,
        text_path: JsonPath,
    ) -> bool:
        """Whether a probe with sentinel leaves decodes identically both ways."""
        probe = b""
        cursor = 0
        expected = copy.deepcopy(value)
        sentinels: dict[JsonPath, int] = {}
        for number, (start, stop, path) in enumerate(spans):
            probe += data[cursor:start]
            if path is None:
                probe += json.dumps(_SENTINEL_TEXT).encode()
                _replace(expected, text_path, _SENTINEL_TEXT)
            else:
                sentinels[path] = _SENTINEL_INT_BASE + number
                probe += str(sentinels[path]).encode()
                _replace(expected, path, sentinels[path])
            cursor = stop
        probe += data[cursor:]
        try:
            parsed = json.loads(probe)
        except ValueError:
            return False
        match = self.match(self.event, probe)
        if parsed != expected or match is None or self.text(match) != _SENTINEL_TEXT:
            return False
        return all(self.integer(match, path) == number for path, number in sentinels.items())

    def match(self, event: str | None, data: bytes) -> re.Match[bytes] | None:
        """The match of an event of this shape, else ``None``."""
        if event != self.event or not data.startswith(self._prefix):
            return None
        return self._rest.fullmatch(data, self._prefix_len)

    def text(self, match: re.Match[bytes]) -> str | None:
        """The decoded text of ``match``; ``None`` when it is not valid UTF-8."""
        try:
            token = match[self._text_group].decode("utf-8")
        except UnicodeDecodeError:
            return None
        if "\\" in token:
            return scanstring(token + '"', 0, True)[0]
        return token

    def integer(self, match: re.Match[bytes], path: JsonPath) -> int | None:
        """The integer at ``path`` in ``match``, or ``None`` when it is not a hole."""
        group = self._int_groups.get(path)
        return None if group is None else int(match[group])


class ShapeLearner:
    """When to try learning a shape again: after 1, 2, 4, ... 1024 full parses.

    Learning costs tens of microseconds; a stream whose events never settle
    into a shape must not pay it on every event.
    """

    __slots__ = ("_countdown", "_interval")

    def __init__(self) -> None:
        self._interval = 1
        self._countdown = 0

    def due(self) -> bool:
        """Whether to try now (counts one full parse)."""
        if self._countdown > 0:
            self._countdown -= 1
            return False
        return True

    def learned(self, shape: EventShape | None) -> EventShape | None:
        """Record the outcome of an attempt; return ``shape``."""
        if shape is None:
            self._interval = min(self._interval * 2, 1024)
            self._countdown = self._interval
        else:
            self._interval = 1
        return shape


def _skip(text: str, index: int) -> int:
    while text[index] in _WHITESPACE:
        index += 1
    return index


def _walk(text: str, index: int, path: JsonPath, leaves: list[tuple[JsonPath, int, int]]) -> int:
    """Record the span of every leaf of the JSON value at ``index``; return its end."""
    opener = text[index]
    if opener == "{":
        index = _skip(text, index + 1)
        if text[index] == "}":
            return index + 1
        while True:
            if text[index] != '"':
                raise ValueError("expected a key")
            key, index = scanstring(text, index + 1, True)
            index = _skip(text, index)
            if text[index] != ":":
                raise ValueError("expected ':'")
            index = _skip(text, _walk(text, _skip(text, index + 1), (*path, key), leaves))
            if text[index] == "}":
                return index + 1
            if text[index] != ",":
                raise ValueError("expected ',' or '}'")
            index = _skip(text, index + 1)
    if opener == "[":
        index = _skip(text, index + 1)
        if text[index] == "]":
            return index + 1
        position = 0
        while True:
            index = _skip(text, _walk(text, index, (*path, position), leaves))
            position += 1
            if text[index] == "]":
                return index + 1
            if text[index] != ",":
                raise ValueError("expected ',' or ']'")
            index = _skip(text, index + 1)
    _, end = _scan_value(text, index)
    leaves.append((path, index, end))
    return end


def _replace(value: Any, path: JsonPath, leaf: Any) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = leaf
