"""The retry ladder and every wire fault, against real servers on 127.0.0.1."""

from __future__ import annotations

from email.utils import formatdate

import anyio
import pytest

from rhema_lsp.engine import RetryWait, TextDelta
from rhema_lsp.providers import ProviderError, ProviderHTTPError, ProviderStreamError
from tests.fakes.model_server import (
    FakeModelServer,
    error_reply,
    raw_reply,
    stream_error_reply,
    text_reply,
    tool_reply,
)
from tests.unit.providers.helpers import FakeSleep, Recorder, adapter, ask

TRANSIENT = [408, 409, 429, 500, 502, 503, 504, 529]


@pytest.mark.parametrize("status", TRANSIENT)
@pytest.mark.parametrize(
    ("headers", "expected"),
    [({}, 0.5), ({"retry-after": "3"}, 3.0), ({"retry-after-ms": "250", "retry-after": "9"}, 0.25)],
    ids=["backoff", "retry-after", "retry-after-ms"],
)
async def test_transient_status_is_retried(
    any_wire: FakeModelServer, status: int, headers: dict[str, str], expected: float
) -> None:
    any_wire.script(error_reply(status, headers=headers), text_reply("ok"))
    sleep = FakeSleep()
    sink = Recorder()
    output = await adapter(any_wire, sleep=sleep).complete(ask(), sink)
    assert output.message.text == "ok"
    assert sleep.delays == [expected]
    (wait,) = sink.of(RetryWait)
    assert (wait.attempt, wait.total, wait.delay_seconds) == (1, 4, expected)
    assert str(status) in wait.error
    assert len(any_wire.requests) == 2


async def test_retry_after_http_date(openai_server: FakeModelServer) -> None:
    now = 1_700_000_000.0
    openai_server.script(
        error_reply(429, headers={"retry-after": formatdate(now + 7, usegmt=True)}),
        text_reply("ok"),
    )
    sleep = FakeSleep()
    await adapter(openai_server, sleep=sleep, now=now).complete(ask(), Recorder())
    assert sleep.delays == [7.0]


@pytest.mark.parametrize(
    "header", [{"retry-after": "600"}, {"retry-after": "0"}, {"retry-after-ms": "-5"}]
)
async def test_out_of_range_server_delay_falls_back_to_backoff(
    openai_server: FakeModelServer, header: dict[str, str]
) -> None:
    openai_server.script(error_reply(503, headers=header), text_reply("ok"))
    sleep = FakeSleep()
    await adapter(openai_server, sleep=sleep).complete(ask(), Recorder())
    assert sleep.delays == [0.5]


async def test_ladder_gives_up_after_all_attempts(openai_server: FakeModelServer) -> None:
    openai_server.script(*[error_reply(503) for _ in range(6)])
    sleep = FakeSleep()
    sink = Recorder()
    with pytest.raises(ProviderError, match="gave up after 4 attempts"):
        await adapter(openai_server, sleep=sleep).complete(ask(), sink)
    assert sleep.delays == [0.5, 1.0, 2.0]
    assert [(w.attempt, w.total) for w in sink.of(RetryWait)] == [(1, 4), (2, 4), (3, 4)]
    assert len(openai_server.requests) == 4


async def test_backoff_is_capped_and_jittered(openai_server: FakeModelServer) -> None:
    from rhema_lsp.providers import RetryPolicy

    low = RetryPolicy(jitter=lambda: 0.0)
    high = RetryPolicy(jitter=lambda: 0.999)
    assert [low.delay(n, None) for n in range(6)] == [0.4, 0.8, 1.6, 3.2, 6.4, 6.4]
    assert all(0.5 * 2**n * 1.19 <= high.delay(n, None) <= 8.0 for n in range(4))
    assert high.delay(10, None) == 8.0


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_permanent_status_fails_at_once_with_server_text(
    any_wire: FakeModelServer, status: int
) -> None:
    any_wire.script(
        error_reply(
            status,
            {"error": {"message": "model `nope` does not exist", "type": "invalid_request_error"}},
        )
    )
    with pytest.raises(ProviderHTTPError) as caught:
        await adapter(any_wire).complete(ask(), Recorder())
    assert caught.value.status == status
    assert not caught.value.transient
    assert "model `nope` does not exist" in str(caught.value)
    assert len(any_wire.requests) == 1


async def test_in_stream_overload_before_content_is_retried(any_wire: FakeModelServer) -> None:
    any_wire.script(stream_error_reply(), text_reply("fine"))
    sink = Recorder()
    output = await adapter(any_wire).complete(ask(), sink)
    assert output.message.text == "fine"
    assert len(sink.of(RetryWait)) == 1


async def test_in_stream_overload_after_content_is_not_retried(any_wire: FakeModelServer) -> None:
    any_wire.script(stream_error_reply("Partial answer"), text_reply("never"))
    sink = Recorder()
    with pytest.raises(ProviderStreamError, match="broke mid-answer") as caught:
        await adapter(any_wire).complete(ask(), sink)
    assert not caught.value.transient
    assert not sink.of(RetryWait)
    assert len(any_wire.requests) == 1


async def test_connection_reset_mid_stream(any_wire: FakeModelServer) -> None:
    any_wire.script(text_reply("Some text here", chunk=2, delay=0.01, end="reset"))
    sink = Recorder()
    with pytest.raises(ProviderStreamError, match="broke mid-answer"):
        await adapter(any_wire).complete(ask(), sink)
    assert sink.of(TextDelta)
    assert len(any_wire.requests) == 1


async def test_connection_reset_before_content_is_retried(openai_server: FakeModelServer) -> None:
    openai_server.script(raw_reply([": keep-alive", ""], end="reset"), text_reply("ok"))
    output = await adapter(openai_server).complete(ask(), Recorder())
    assert output.message.text == "ok"


async def test_eof_without_terminator(any_wire: FakeModelServer) -> None:
    # The body ends cleanly at the HTTP level, but the wire's own terminator never came.
    any_wire.script(text_reply("Cut short", chunk=3, end="eof"))
    with pytest.raises(ProviderStreamError, match="broke mid-answer"):
        await adapter(any_wire).complete(ask(), Recorder())


async def test_partial_tool_calls_are_never_returned(any_wire: FakeModelServer) -> None:
    any_wire.script(
        tool_reply(("run_command", {"command": "rm -rf build"}), text="Cleaning.", end="eof")
    )
    sink = Recorder()
    with pytest.raises(ProviderStreamError):
        await adapter(any_wire).complete(ask(), sink)


async def test_stalled_stream_fails(openai_server: FakeModelServer) -> None:
    # The opening chunk (role only) arrives; the first delta never does in time.
    openai_server.script(text_reply("ab", delay=3.0))
    with pytest.raises(ProviderStreamError, match=r"stalled: no bytes for 0\.3 s") as caught:
        await adapter(openai_server, stall_timeout=0.3, attempts=1).complete(ask(), Recorder())
    assert caught.value.transient  # nothing was emitted yet: a retry could help


async def test_connect_error_is_transient() -> None:
    with FakeModelServer(wire="openai") as server:
        provider = adapter(server, attempts=2)
    sleep_sink = Recorder()
    with pytest.raises(ProviderError, match="could not connect") as caught:
        await provider.complete(ask(), sleep_sink)
    assert caught.value.transient
    assert len(sleep_sink.of(RetryWait)) == 1


async def test_redirect_to_another_origin_is_refused(openai_server: FakeModelServer) -> None:
    with FakeModelServer(wire="openai") as elsewhere:
        elsewhere.script(text_reply("stolen"))
        target = f"{elsewhere.base_url}/chat/completions"
        openai_server.script(error_reply(307, "", headers={"location": target}))
        with pytest.raises(ProviderHTTPError, match="redirect") as caught:
            await adapter(openai_server, key="sk-redirect-secret").complete(ask(), Recorder())
        assert target in str(caught.value)
        assert not caught.value.transient
        assert elsewhere.received == []


async def test_cancellation_closes_the_stream(any_wire: FakeModelServer) -> None:
    any_wire.script(text_reply("x" * 1000, delay=0.01))
    provider = adapter(any_wire)

    class CancelAfter:
        def __init__(self, scope: anyio.CancelScope) -> None:
            self.scope = scope
            self.deltas = 0

        def emit(self, event: object) -> None:
            if isinstance(event, TextDelta):
                self.deltas += 1
                if self.deltas == 5:
                    self.scope.cancel()

    with anyio.CancelScope() as scope:
        sink = CancelAfter(scope)
        await provider.complete(ask(), sink)
    assert scope.cancelled_caught
    assert await anyio.to_thread.run_sync(any_wire.client_closed.wait, 10)
    assert any_wire.disconnects == 1


async def test_cancellation_interrupts_a_retry_wait(openai_server: FakeModelServer) -> None:
    from rhema_lsp.providers import RetryPolicy, build_http_provider

    openai_server.script(error_reply(429, headers={"retry-after": "50"}), text_reply("late"))
    provider = build_http_provider(
        "openai",
        name="t",
        base_url=openai_server.base_url,
        model="m",
        key=None,
        retry=RetryPolicy(attempts=3),  # the real anyio sleep
    )
    waits: list[RetryWait] = []

    class CancelOnWait:
        def emit(self, event: object) -> None:
            if isinstance(event, RetryWait):
                waits.append(event)
                scope.cancel()

    with anyio.fail_after(30), anyio.CancelScope() as scope:
        await provider.complete(ask(), CancelOnWait())
    assert scope.cancelled_caught
    assert [w.delay_seconds for w in waits] == [50.0]
    assert len(openai_server.requests) == 1


_MISSHAPEN_EVENTS = {
    "openai": ['data: {"choices": "not a list"}', ""],
    "anthropic": ["event: message_start", "data: 42", ""],
    "gemini": ['data: {"candidates": [{"content": {"parts": ["not an object"]}}]}', ""],
}


async def test_an_event_of_an_unexpected_shape_is_a_stream_error(
    any_wire: FakeModelServer,
) -> None:
    # Valid JSON the wire never sends (often: the wrong rhema.protocol for the server).
    any_wire.script(raw_reply(_MISSHAPEN_EVENTS[any_wire.wire]), text_reply("never"))
    with pytest.raises(ProviderStreamError, match="cannot read") as caught:
        await adapter(any_wire).complete(ask(), Recorder())
    assert not caught.value.transient
    assert "rhema.protocol" in str(caught.value)
    assert len(any_wire.requests) == 1


async def test_a_usage_count_that_is_not_a_number_is_a_stream_error(
    openai_server: FakeModelServer,
) -> None:
    openai_server.script(raw_reply(['data: {"choices": [], "usage": {"prompt_tokens": "many"}}']))
    with pytest.raises(ProviderStreamError, match="cannot read"):
        await adapter(openai_server).complete(ask(), Recorder())


async def test_a_malformed_event_before_content_is_retried(any_wire: FakeModelServer) -> None:
    any_wire.script(raw_reply(['data: {"cut sho', ""]), text_reply("ok"))
    sink = Recorder()
    output = await adapter(any_wire).complete(ask(), sink)
    assert output.message.text == "ok"
    (wait,) = sink.of(RetryWait)
    assert "sent a malformed event" in wait.error
