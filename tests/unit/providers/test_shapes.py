"""Learned event shapes decode exactly what the full JSON parse decodes, or decline.

Randomized (seeded, so reproducible): strings mixing ASCII, JSON escapes,
control characters, non-ASCII, astral characters (surrogate-pair escapes) and
lone surrogates, written both escaped and raw, plus corrupted events that must
never be decoded differently from the full parse
(:func:`~rhema_lsp.providers.transport.parse_json`, strict UTF-8).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from rhema_lsp.providers.shapes import EventShape, JsonPath, ShapeLearner
from rhema_lsp.providers.transport import parse_json

ALPHABET = ['a', 'Z', ' ', '"', "\\", "/", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "\u2028",
            "中", "\U0001f600", "\ud800", "\udfff", "{", "}", ",", ":", "0"]  # fmt: skip

OPENAI = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 17,
    "model": "m",
    "choices": [{"index": 0, "delta": {"content": "x"}, "logprobs": None, "finish_reason": None}],
}
ANTHROPIC = {
    "type": "content_block_delta",
    "index": 0,
    "delta": {"type": "text_delta", "text": "x"},
}
GEMINI = {
    "candidates": [{"content": {"role": "model", "parts": [{"text": "x"}]}, "index": 0}],
    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11},
    "modelVersion": "gemini-2.5",
}
CASES: list[tuple[dict[str, Any], JsonPath]] = [
    (OPENAI, ("choices", 0, "delta", "content")),
    (ANTHROPIC, ("delta", "text")),
    (GEMINI, ("candidates", 0, "content", "parts", 0, "text")),
]
USAGE: JsonPath = ("usageMetadata",)


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 12)))


def at(value: Any, path: JsonPath) -> Any:
    for step in path:
        value = value[step]
    return value


def with_leaf(value: Any, path: JsonPath, leaf: Any) -> Any:
    copy = json.loads(json.dumps(value))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = leaf
    return copy


def encode(value: Any, ascii_only: bool, spaced: bool) -> bytes:
    separators = (", ", ": ") if spaced else (",", ":")
    return json.dumps(value, ensure_ascii=ascii_only, separators=separators).encode(
        "utf-8", "surrogatepass"
    )


def learn(template: dict[str, Any], path: JsonPath, ascii_only: bool, spaced: bool) -> EventShape:
    data = encode(template, ascii_only, spaced)
    shape = EventShape.learn("ev", data, json.loads(data), path, lambda p: p[:1] == USAGE)
    assert shape is not None
    return shape


@pytest.mark.parametrize(("template", "path"), CASES)
@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize("spaced", [True, False])
def test_shaped_decoding_equals_the_full_parse(
    template: dict[str, Any], path: JsonPath, ascii_only: bool, spaced: bool
) -> None:
    shape = learn(template, path, ascii_only, spaced)
    rng = random.Random(f"{path}{ascii_only}{spaced}")
    for _ in range(1500):
        text = random_text(rng)
        value = with_leaf(template, path, text)
        if "usageMetadata" in template:
            value = with_leaf(
                value, ("usageMetadata", "candidatesTokenCount"), rng.randrange(10**6)
            )
        data = encode(value, ascii_only, spaced)
        try:
            expected = parse_json(data)
        except ValueError:
            expected = None  # raw lone surrogates are not UTF-8: the full parse refuses
        match = shape.match("ev", data)
        decoded = None if match is None else shape.text(match)
        if expected is None:
            assert decoded is None
            continue
        assert decoded == at(expected, path), (text, data)
        if "usageMetadata" in template:
            assert match is not None
            count = shape.integer(match, ("usageMetadata", "candidatesTokenCount"))
            assert count == expected["usageMetadata"]["candidatesTokenCount"]
            assert shape.integer(match, ("usageMetadata", "missing")) is None


@pytest.mark.parametrize(("template", "path"), CASES)
def test_corrupted_events_are_never_decoded_differently(
    template: dict[str, Any], path: JsonPath
) -> None:
    shape = learn(template, path, ascii_only=True, spaced=False)
    rng = random.Random(str(path))
    base = encode(with_leaf(template, path, "hello\\world"), True, False)
    assert shape.match("other-event", base) is None
    for _ in range(3000):
        data = bytearray(base)
        for _ in range(rng.randrange(1, 3)):
            position = rng.randrange(len(data))
            data[position : position + 1] = rng.choice(
                [b"", b'"', b"\\", b"\x01", b"\xff", b"\xc3", b"u", b"9", b"-", b" ", b"x"]
            )
        try:
            expected = parse_json(bytes(data))
        except ValueError:
            expected = None
        match = shape.match("ev", bytes(data))
        decoded = None if match is None else shape.text(match)
        if decoded is not None:
            assert expected is not None, bytes(data)
            assert decoded == at(expected, path)
            if "usageMetadata" in template:  # its integers are holes too
                expected = with_leaf(expected, USAGE, template["usageMetadata"])
            assert with_leaf(expected, path, "x") == template


def test_shapes_are_refused_when_not_exact() -> None:
    path: JsonPath = ("delta", "text")
    # A later duplicate key overrides the first: the hole would not be the value.
    duplicate = b'{"delta":{"text":"a","text":"b"}}'
    assert EventShape.learn(None, duplicate, json.loads(duplicate), path) is None
    # The text is not a string, or is missing.
    for data in (b'{"delta":{"text":1}}', b'{"delta":{}}', b"[1]", b'{"delta":{"text":"a"}} x'):
        assert EventShape.learn(None, data, {"delta": {"text": "a"}}, path) is None


def test_learner_backs_off_after_failures_and_resets_on_success() -> None:
    learner = ShapeLearner()
    attempts = []
    for number in range(40):
        if learner.due():
            attempts.append(number)
            learner.learned(None)
    assert attempts == [0, 3, 8, 17, 34]
    data = b'{"t":"a"}'
    shape = EventShape.learn(None, data, json.loads(data), ("t",))
    assert learner.learned(shape) is shape
    learner.learned(None)
    assert not learner.due()
    assert not learner.due()
    assert learner.due()
