"""Providers that never quite stop, against real servers on 127.0.0.1.

Each hostile stream is cut with an error that says what happened and which
setting moves the limit (refused), is not retried, and the same provider
answers the next request (recovered). Linearity of the SSE parser is shown
by its own work counter across sizes, never by a clock.
"""

from __future__ import annotations

import json

import pytest

from rhema_lsp.engine import TextDelta
from rhema_lsp.providers import (
    ProviderChoice,
    ProviderSettings,
    ProviderStreamError,
    build_provider,
)
from rhema_lsp.providers.limits import (
    MAX_RESPONSE_BYTES,
    MIN_STREAM_RATE,
    RESPONSE_TIMEOUT,
    ResponseLimits,
)
from rhema_lsp.providers.sse import MAX_EVENT_BYTES, EventTooLong, SSEParser
from rhema_lsp.providers.transport import HttpStreamProvider
from rhema_lsp.runs.settings import Settings
from tests.fakes.model_server import FakeModelServer, drip_reply, raw_reply, text_reply
from tests.unit.providers.helpers import Recorder, adapter, ask

MIB = 1024 * 1024


def limited(server: FakeModelServer, limits: ResponseLimits) -> HttpStreamProvider:
    provider = adapter(server)
    provider.limits = limits
    return provider


async def refused(
    provider: HttpStreamProvider, server: FakeModelServer, sink: Recorder | None = None
) -> ProviderStreamError:
    """The error a hostile stream ends in: not transient, and not tried again."""
    with pytest.raises(ProviderStreamError) as caught:
        await provider.complete(ask(), sink or Recorder())
    assert not caught.value.transient
    assert len(server.requests) == 1
    return caught.value


async def recovers(provider: HttpStreamProvider, server: FakeModelServer) -> None:
    """The provider answers the next request as if nothing had happened."""
    server.script(text_reply("still here"))
    output = await provider.complete(ask(), Recorder())
    assert output.message.text == "still here"


async def test_a_slow_drip_ends_at_the_response_deadline(openai_server: FakeModelServer) -> None:
    # The deadline is the transport's, the same for every wire: one wire is
    # enough, and each run waits for it.
    openai_server.script(drip_reply(every=2.0))
    provider = limited(openai_server, ResponseLimits(response_timeout=3, min_rate=0))
    error = await refused(provider, openai_server)
    assert "did not finish its answer within 3 s (rhema.responseTimeout)" in error.message
    assert "raise rhema.responseTimeout" in error.message
    assert openai_server.client_closed.wait(10)  # the connection was really dropped
    await recovers(provider, openai_server)


async def test_a_drip_slower_than_the_minimum_rate_is_cut(openai_server: FakeModelServer) -> None:
    # 30 bytes a minute against a minimum of 600: after the 3 s grace, each
    # byte buys only 0.1 s more.
    openai_server.script(drip_reply(every=2.0))
    provider = limited(openai_server, ResponseLimits(min_rate=600, grace=3))
    error = await refused(provider, openai_server)
    assert "slower than 600 bytes a minute (rhema.minStreamRate)" in error.message
    assert "0 turns the check off" in error.message
    await recovers(provider, openai_server)


async def test_a_stream_at_a_keepalive_pace_is_not_cut_by_the_rate(
    openai_server: FakeModelServer,
) -> None:
    # A keep-alive comment every 0.2 s (about 7,500 bytes a minute) well past
    # a 1 s grace, then the answer: the minimum rate lets it through.
    body = b"".join(
        [b": OPENROUTER PROCESSING\n\n"] * 12
        + [
            b'data: {"choices":[{"index":0,"delta":{"content":"late"}}]}\n\n',
            b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
            b"data: [DONE]\n\n",
        ]
    )
    openai_server.script(raw_reply(body, pace=(25, 0.2)))
    provider = limited(openai_server, ResponseLimits(min_rate=1000, grace=1))
    output = await provider.complete(ask(), Recorder())
    assert output.message.text == "late"


async def test_a_40_mb_line_is_refused_at_the_event_cap(any_wire: FakeModelServer) -> None:
    any_wire.script(raw_reply(b"data: " + b"x" * (40 * 1000 * 1000)))
    provider = adapter(any_wire)
    sink = Recorder()
    error = await refused(provider, any_wire, sink)
    assert "sent an event longer than 16 MiB without ending it" in error.message
    assert "rhema.baseUrl" in error.message
    assert sink.of(TextDelta) == []  # nothing of the line reached the sink
    await recovers(provider, any_wire)


def _sse(data: object, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _valid_answer(wire: str, size: int) -> tuple[bytes, str]:
    """A well-formed streamed answer of about ``size`` bytes on ``wire``, and its text."""
    text = "y" * 1000
    head = end = b""
    if wire == "openai":
        event = _sse({"choices": [{"index": 0, "delta": {"content": text}}]})
        stop = _sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        end = stop + b"data: [DONE]\n\n"
    elif wire == "anthropic":
        delta = {"type": "text_delta", "text": text}
        event = _sse({"type": "content_block_delta", "index": 0, "delta": delta}, "x")
        block = {"type": "text", "text": ""}
        head = _sse({"type": "message_start", "message": {"usage": {"input_tokens": 1}}}) + _sse(
            {"type": "content_block_start", "index": 0, "content_block": block}
        )
        end = (
            _sse({"type": "content_block_stop", "index": 0})
            + _sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}})
            + _sse({"type": "message_stop"})
        )
    else:
        event = _sse({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]})
        last = {"candidates": [{"content": {"parts": [{"text": "."}]}, "finishReason": "STOP"}]}
        end = _sse(last)
    count = size // len(event)
    return head + event * count + end, text * count + ("." if wire == "gemini" else "")


async def test_a_50_mb_valid_answer_is_capped(any_wire: FakeModelServer) -> None:
    # Each event is well formed: only the whole is too large.
    any_wire.script(raw_reply(_valid_answer(any_wire.wire, 50 * 1000 * 1000)[0]))
    provider = adapter(any_wire)
    sink = Recorder()
    error = await refused(provider, any_wire, sink)
    assert "sent more than 32 MiB for one answer" in error.message
    streamed = sum(len(delta.text) for delta in sink.of(TextDelta))
    assert 0 < streamed <= MAX_RESPONSE_BYTES  # what came before the cut was shown, no more
    await recovers(provider, any_wire)


async def test_an_answer_under_the_cap_is_read_whole(any_wire: FakeModelServer) -> None:
    body, text = _valid_answer(any_wire.wire, 4 * MIB)
    any_wire.script(raw_reply(body))
    output = await adapter(any_wire).complete(ask(), Recorder())
    assert output.message.text == text


def _line_work(size: int, read: int = 4096) -> int:
    """The parser's work reading one ``size``-byte line in ``read``-byte reads, then its end."""
    parser = SSEParser()
    parser.feed(b"data: ")
    piece = b"x" * read
    for _ in range(size // read):
        parser.feed(piece)
    (event,) = parser.feed(b"\n\n")
    assert len(event[1]) == size
    return parser.work


def test_the_parser_is_linear_in_a_long_lines_length() -> None:
    small, large = _line_work(4 * MIB), _line_work(8 * MIB)
    # Twice the line, twice the work (a quadratic parser does four times).
    assert 1.9 < large / small < 2.1
    assert large < 2.1 * 8 * MIB  # each byte searched once and joined once


def feed_all(parser: SSEParser, pieces: list[bytes]) -> None:
    for piece in pieces:
        parser.feed(piece)


def test_a_line_past_the_cap_is_refused_after_reading_no_more_than_the_cap() -> None:
    parser = SSEParser()
    piece = b"x" * 65536
    with pytest.raises(EventTooLong):
        feed_all(parser, [piece] * (40 * MIB // len(piece)))
    assert MAX_EVENT_BYTES < parser.work <= MAX_EVENT_BYTES + len(piece)


def test_many_short_lines_without_a_blank_line_are_one_event_and_capped() -> None:
    parser = SSEParser(max_event=1000)
    with pytest.raises(EventTooLong):
        feed_all(parser, [b"data: x\n"] * 200)


def test_a_long_event_inside_one_read_is_refused_too() -> None:
    parser = SSEParser(max_event=1000)
    with pytest.raises(EventTooLong):
        parser.feed(b"data: ok\n\ndata: " + b"x" * 2000 + b"\n\ndata: after\n\n")


def test_the_settings_reach_the_adapter_with_the_same_defaults() -> None:
    assert Settings().response_timeout == ProviderSettings().response_timeout == RESPONSE_TIMEOUT
    assert Settings().min_stream_rate == ProviderSettings().min_stream_rate == MIN_STREAM_RATE
    choice = ProviderChoice("custom", "openai", "m", "http://127.0.0.1:9/v1", "test")
    settings = Settings.model_validate({"responseTimeout": 30, "minStreamRate": 0})
    built = build_provider(choice, ProviderSettings.of(settings))
    assert isinstance(built.provider, HttpStreamProvider)
    assert built.provider.limits == ResponseLimits(response_timeout=30, min_rate=0)
