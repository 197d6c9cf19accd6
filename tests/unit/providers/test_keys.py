"""Key safety: origin binding, loopback-only http, and no key in anything emitted."""

from __future__ import annotations

import logging

import pytest

from rhema_lsp.engine import ProviderError
from rhema_lsp.providers import (
    ProviderConfigError,
    ProviderSettings,
    ProviderStreamError,
    resolve_provider,
)
from rhema_lsp.providers.secrets import Secret, check_base_url, origin_of
from tests.fakes.model_server import (
    FakeModelServer,
    error_reply,
    raw_reply,
    stream_error_reply,
    text_reply,
    tool_reply,
)
from tests.unit.providers.helpers import Recorder, adapter, ask

KEY = "sk-live-THIS-MUST-NEVER-LEAK-0123456789"


async def test_preset_key_refused_for_a_foreign_base_url(openai_server: FakeModelServer) -> None:
    openai_server.script(text_reply("should not be asked"))
    with pytest.raises(ProviderConfigError) as caught:
        await resolve_provider(
            ProviderSettings(provider="openai", base_url=openai_server.base_url, model="m"),
            {"OPENAI_API_KEY": KEY},
        )
    message = str(caught.value)
    assert "RHEMA_KEY_ORIGINS" in message and openai_server.origin + ":" not in message
    assert KEY not in message
    assert openai_server.received == []


async def test_preset_key_sent_to_a_bound_origin(openai_server: FakeModelServer) -> None:
    openai_server.script(text_reply("ok"))
    resolved = await resolve_provider(
        ProviderSettings(provider="openai", base_url=openai_server.base_url, model="m"),
        {
            "OPENAI_API_KEY": KEY,
            "RHEMA_KEY_ORIGINS": f"https://example.org, {openai_server.origin}",
        },
    )
    await resolved.provider.complete(ask(), Recorder())
    assert openai_server.posts[0].headers["authorization"] == f"Bearer {KEY}"


async def test_custom_key_only_to_bound_origins(any_wire: FakeModelServer) -> None:
    header = {"openai": "authorization", "anthropic": "x-api-key", "gemini": "x-goog-api-key"}[
        any_wire.wire
    ]
    any_wire.script(error_reply(401, {"error": {"message": "missing key"}}), text_reply("ok"))
    settings = ProviderSettings(base_url=any_wire.base_url, protocol=any_wire.wire, model="m")
    unbound = await resolve_provider(settings, {"RHEMA_API_KEY": KEY})
    assert "RHEMA_API_KEY not sent" in unbound.source
    with pytest.raises(ProviderError, match="no key was sent") as caught:
        await unbound.provider.complete(ask(), Recorder())
    assert "RHEMA_KEY_ORIGINS" in str(caught.value)
    assert header not in any_wire.posts[0].headers
    bound = await resolve_provider(
        settings, {"RHEMA_API_KEY": KEY, "RHEMA_KEY_ORIGINS": any_wire.origin}
    )
    await bound.provider.complete(ask(), Recorder())
    assert KEY in any_wire.posts[1].headers[header]


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/v1",
        "http://10.0.0.5:8080/v1",
        "http://192.168.1.2/v1",
        "http://localhost.example.com/v1",
    ],
)
async def test_plain_http_refused_off_loopback(url: str) -> None:
    with pytest.raises(ProviderConfigError, match="plain http://"):
        await resolve_provider(ProviderSettings(base_url=url, protocol="openai", model="m"), {})
    with pytest.raises(ProviderConfigError, match="plain http://"):
        await resolve_provider(
            ProviderSettings(provider="openai", base_url=url),
            {"OPENAI_API_KEY": KEY, "RHEMA_KEY_ORIGINS": url},
        )


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/v1",
        "http://localhost:1234/v1",
        "http://[::1]:11434/v1",
        "https://example.com/v1/",
    ],
)
def test_allowed_base_urls(url: str) -> None:
    assert check_base_url(url) == url.rstrip("/")


def test_origins_normalise_default_ports() -> None:
    assert origin_of("https://API.openai.com/v1") == origin_of("https://api.openai.com:443/x")
    assert origin_of("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080"


async def test_key_never_appears_in_anything_emitted_or_logged(
    any_wire: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    any_wire.script(
        text_reply("hello", thinking="hm"),
        tool_reply(("read_file", {"path": "a"})),
        error_reply(503, headers={"retry-after-ms": "1"}),
        stream_error_reply("partial"),
        # A server that echoes the key back in its error text.
        error_reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}),
        error_reply(307, "", headers={"location": f"http://127.0.0.1:9/steal?key={KEY}"}),
    )
    resolved = await resolve_provider(
        ProviderSettings(
            base_url=any_wire.base_url, protocol=any_wire.wire, model="m", max_retries=2
        ),
        {"RHEMA_API_KEY": KEY, "RHEMA_KEY_ORIGINS": any_wire.origin},
    )
    seen += [
        repr(resolved),
        str(resolved),
        resolved.source,
        repr(resolved.provider),
        repr(Secret(KEY)),
        str(Secret(KEY)),
    ]
    sink = Recorder()
    for _ in range(5):
        try:
            output = await resolved.provider.complete(ask(), sink)
            seen.append(output.model_dump_json())
        except ProviderError as error:
            seen += [str(error), repr(error), repr(error.__cause__), str(error.__cause__)]
    seen += [str(event.payload()) for event in sink.events]
    seen += [record.getMessage() for record in caplog.records]
    seen.append(caplog.text)
    assert len(any_wire.posts) == 6
    assert all(
        KEY in post.headers[h]
        for post in any_wire.posts
        for h in post.headers
        if KEY in post.headers[h]
    )
    leaked = [text for text in seen if KEY in text]
    assert leaked == []
    assert any("[redacted]" in text for text in seen)


_ECHOING_STREAMS = {
    "openai": [f'data: {{"error": {{"message": "bad key {KEY}", "code": 401}}}}', ""],
    "anthropic": [
        "event: error",
        f'data: {{"type": "error", "error": {{"type": "authentication_error", '
        f'"message": "bad key {KEY}"}}}}',
        "",
    ],
    "gemini": [
        f'data: {{"error": {{"code": 401, "message": "bad key {KEY}", '
        '"status": "UNAUTHENTICATED"}}',
        "",
    ],
}


@pytest.mark.parametrize("malformed", [False, True], ids=["stream-error", "malformed-event"])
async def test_key_echoed_inside_the_stream_is_redacted(
    any_wire: FakeModelServer, malformed: bool
) -> None:
    lines = [f"data: {{not json {KEY}", ""] if malformed else _ECHOING_STREAMS[any_wire.wire]
    any_wire.script(raw_reply(lines))
    provider = adapter(any_wire, key=KEY, attempts=1)
    with pytest.raises(ProviderStreamError) as caught:
        await provider.complete(ask(), Recorder())
    assert KEY not in str(caught.value)
    assert KEY not in repr(caught.value)
    assert "[redacted]" in str(caught.value)
