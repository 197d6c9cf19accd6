"""The SSE parser and the event batcher, byte by byte."""

from __future__ import annotations

import json

import pytest

from rhema_lsp.engine import TextDelta, ThinkingDelta, ToolCallStart, Usage, UsageUpdate
from rhema_lsp.providers.decoding import EventBatcher, parse_json, tool_args
from rhema_lsp.providers.sse import SSEParser
from rhema_lsp.providers.transport import error_text
from tests.unit.providers.helpers import Recorder

STREAM = (
    b": OPENROUTER PROCESSING\n\n"
    b'event: message_start\ndata: {"a": 1}\n\n'
    b"data: line one\ndata: line two\n\n"
    b"data:no-space\n\n"
    b"id: 7\nretry: 100\ndata: [DONE]\n\n"
)
EXPECTED = [
    ("message_start", b'{"a": 1}'),
    (None, b"line one\nline two"),
    (None, b"no-space"),
    (None, b"[DONE]"),
]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_events_survive_any_chunking_and_line_ending(newline: bytes, size: int) -> None:
    stream = STREAM.replace(b"\n", newline)
    parser = SSEParser()
    events = []
    for start in range(0, len(stream), size):
        events += parser.feed(stream[start : start + size])
    events += parser.close()
    assert events == EXPECTED


def _spec_events(stream: bytes) -> list[tuple[str | None, bytes]]:
    """The events of a ``\\n``-only stream, read line by line as the SSE spec says."""
    events: list[tuple[str | None, bytes]] = []
    name: str | None = None
    data: list[bytes] = []
    for line in stream.split(b"\n"):
        if not line:
            if data:
                events.append((name, b"\n".join(data)))
            name, data = None, []
        elif line.startswith(b"data:"):
            data.append(line[6:] if line[5:6] == b" " else line[5:])
        elif line.startswith(b"event:"):
            name = line[6:].strip().decode()
    return events


# Streams made of the blocks the parser slices in bulk (one ``data:`` line;
# ``event:`` then one ``data:`` line), with one block in each that is not.
LOOKALIKES = [
    b'data: {"a": 1}\n\ndata: {"b": 2}\n\n\n\ndata: {"c": 3}\n\n',
    b'data: {"a": 1}\n\ndata: one\ndata: two\n\ndata: {"c": 3}\n\n',
    b'data: {"a": 1}\n\n: keep-alive\n\ndata: {"c": 3}\n\n',
    b'event: a\ndata: 1\n\nevent: b\ndata: {"x": "event: c"}\ndata: 2\n\nevent: d\n\n',
    b"event: a\ndata: 1\n\nevent: b\nid: 4\ndata: 2\n\nevent: c\ndata: 3\n\n",
    b"event: a\ndata: 1\n\ndata: 2\n\nevent: c\ndata: 3\n\n",
    b"event: a\ndata: 1\n\nevent: b\ndata:2\n\n",
]


@pytest.mark.parametrize("stream", LOOKALIKES)
@pytest.mark.parametrize("size", [1, 5, 16, 1000])
def test_bulk_slicing_gives_the_events_the_spec_gives(stream: bytes, size: int) -> None:
    parser = SSEParser()
    events = []
    for start in range(0, len(stream), size):
        events += parser.feed(stream[start : start + size])
    events += parser.close()
    assert events == _spec_events(stream)


def test_last_event_without_blank_line_still_counts() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: [DONE]") == []
    assert parser.close() == [(None, b"[DONE]")]


@pytest.mark.parametrize(
    "data",
    [
        b' {"a": [1, "\\u00e9"]} \n',
        b'{"t": "\\ud83d\\ude00 \\u2028 \\"q\\""}',
        b'{"lone": "\\ud800"}',  # orjson refuses a lone surrogate; JSON allows it
        '{"utf8": "é😀"}'.encode(),
    ],
)
def test_parse_json_matches_json_loads(data: bytes) -> None:
    assert parse_json(data) == json.loads(data)


def test_parse_json_reads_an_integer_beyond_64_bits_as_a_float() -> None:
    # orjson's reading, which JSON's number model allows; no wire sends such counts.
    assert parse_json(b"[123456789012345678901234567890]") == [1.2345678901234568e29]


@pytest.mark.parametrize("bad", [b"", b"{", b'{"a": 1} x', b"nope", b'"\xff"'])
def test_parse_json_refuses_what_is_not_one_json_value(bad: bytes) -> None:
    with pytest.raises(ValueError, match=r"."):  # orjson's or json's own message
        parse_json(bad)


def test_batcher_merges_adjacent_deltas_and_keeps_order() -> None:
    sink = Recorder()
    out = EventBatcher(sink)
    out.thinking("a")
    out.thinking("b")
    out.usage(1, 2)
    out.text("c")
    out.text("d")
    out.emit(ToolCallStart("x", "read_file"))
    out.text("e")
    out.usage(1, 5)
    assert sink.events == [ThinkingDelta("ab"), TextDelta("cd"), ToolCallStart("x", "read_file")]
    out.flush()
    assert sink.events[3:] == [TextDelta("e"), UsageUpdate(Usage(input=1, output=5))]
    out.flush()
    assert len(sink.events) == 5


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'{"error": {"message": "bad model", "type": "invalid_request_error"}}',
            "invalid_request_error: bad model",
        ),
        (
            b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
            "overloaded_error: Overloaded",
        ),
        (
            b'[{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}]',
            "RESOURCE_EXHAUSTED: quota",
        ),
        (b'{"error": "plain"}', "plain"),
        (b"upstream timed out", "upstream timed out"),
        (b"", "(empty body)"),
    ],
)
def test_error_text(body: bytes, expected: str) -> None:
    assert error_text(body) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [('{"path": "a"}', {"path": "a"}), ("", {}), ("  ", {}), ('{"path": ', {}), ("[1]", {})],
)
def test_tool_args_are_an_object_or_empty(raw: str, expected: dict[str, str]) -> None:
    assert tool_args(raw) == expected
