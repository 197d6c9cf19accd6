"""One streamed HTTP exchange, shared by every wire adapter.

:class:`HttpStreamProvider` owns the httpx client, the timeouts (connect 10 s;
a stream that sends no byte for ``stall_timeout`` seconds fails), the limits
of :mod:`.limits` (a whole-response deadline, a minimum rate, a size cap),
the key header, the last check on every request body (the server's own keys
are replaced before it leaves: :class:`~rhema_lsp.providers.secrets.KeyGuard`),
the refusal of redirects (a 3xx is an error naming its location: following it
could carry the key to another origin), the mapping of every httpx failure
and of every event a decoder cannot read to a :mod:`.errors` class (with the
key scrubbed from its text), and the retry ladder. An adapter supplies the
URL, headers and JSON body for a request, and a :class:`WireDecoder` that
turns server-sent events into engine events.

The response's bytes go through :class:`~rhema_lsp.providers.sse.SSEParser`,
which hands each event's data over as bytes to the adapter's decoder (what
the decoders share is :mod:`.decoding`).
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, Protocol

import anyio
import httpx

from rhema_lsp.engine import (
    IMAGE_MAX_BYTES,
    EventSink,
    ImageSupport,
    ModelOutput,
    ModelRequest,
    ProviderError,
)
from rhema_lsp.providers.errors import (
    ProviderConnectError,
    ProviderHTTPError,
    ProviderStreamError,
    redact,
)
from rhema_lsp.providers.known import is_loopback
from rhema_lsp.providers.limits import Pace, ResponseLimits, ResponseTooLarge, event_too_long
from rhema_lsp.providers.retry import ContentTrackingSink, RetryPolicy, retry_after_seconds
from rhema_lsp.providers.secrets import KeyGuard, Secret
from rhema_lsp.providers.sse import EventTooLong, SSEParser

__all__ = ["CONNECT_TIMEOUT", "HttpStreamProvider", "WireDecoder", "error_text"]

logger = logging.getLogger("rhema_lsp.providers")

CONNECT_TIMEOUT = 10.0
"""Seconds to establish a connection."""

_ERROR_BODY_LIMIT = 8192


class WireDecoder(Protocol):
    """Turns one response's events into engine events and the final output."""

    def feed(self, event: str | None, data: bytes) -> bool:
        """Handle one SSE event; return ``True`` once the wire's terminator arrived."""
        ...

    def flush(self) -> None:
        """Emit what is batched; called after each network read."""
        ...

    def finish(self, terminated: bool) -> ModelOutput:
        """The output of a finished stream.

        Raises
        ------
        ProviderStreamError
            When the stream ended without its terminator (``terminated`` false).
        """
        ...


def error_text(body: bytes) -> str:
    """The server's own error message from an error body (JSON or text)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        return text[:2000] or "(empty body)"
    if isinstance(parsed, list) and parsed:
        parsed = parsed[0]
    if isinstance(parsed, dict):
        inner = parsed.get("error", parsed)
        if isinstance(inner, dict):
            message = inner.get("message") or inner.get("msg")
            kind = inner.get("type") or inner.get("status")
            if message:
                return f"{kind}: {message}" if kind else str(message)
        elif isinstance(inner, str):
            return inner
    return text[:2000]


async def _drain(response: httpx.Response, decoder: WireDecoder, pace: Pace) -> bool:
    """Feed every event to ``decoder``; whether its terminator arrived.

    Raises
    ------
    ResponseTooLarge, EventTooLong
        Past the response's or an event's size cap.
    """
    parser = SSEParser()
    feed = decoder.feed
    add = pace.add
    async for chunk in response.aiter_bytes():
        add(len(chunk))
        for event, data in parser.feed(chunk):
            if feed(event, data):
                return True
        decoder.flush()
    return any(feed(event, data) for event, data in parser.close())


class HttpStreamProvider:
    """Base of the wire adapters: one POST, streamed, with the retry ladder.

    Parameters
    ----------
    name
        The provider's display name (``"openai"``, ``"ollama"``, ...).
    base_url
        The endpoint base, without a trailing slash.
    model
        The model id sent when the request's params name none.
    key
        The API key, or ``None`` to send no credential.
    stall_timeout
        Seconds without any byte after which a stream fails; also the grace
        before the minimum rate applies.
    retry
        The retry ladder; its ``attempts`` come from the settings.
    limits
        The whole-response deadline, minimum rate and size cap.
    images
        What the model takes of images (see :mod:`.images`); by default any
        image up to the engine's cap.
    """

    def __init__(
        self,
        *,
        name: str,
        base_url: str,
        model: str,
        key: Secret | None = None,
        stall_timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        limits: ResponseLimits | None = None,
        images: ImageSupport | None = None,
    ) -> None:
        self.name = name
        self.images = images or ImageSupport(IMAGE_MAX_BYTES)
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._key = key
        self.stall_timeout = stall_timeout
        self.retry = retry or RetryPolicy()
        self.limits = limits or ResponseLimits()
        self._guard = KeyGuard.from_env(os.environ, key)
        host = httpx.URL(self.base_url).host
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(
                connect=CONNECT_TIMEOUT, read=stall_timeout, write=stall_timeout, pool=None
            ),
            follow_redirects=False,
            # Loopback servers never need a proxy, and an ambient one must not see the stream.
            trust_env=not is_loopback(host),
        )

    def __repr__(self) -> str:
        keyed = "with key" if self._key is not None else "no key"
        return (
            f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r}, "
            f"model={self.model!r}, {keyed})"
        )

    @property
    def sends_key(self) -> bool:
        """Whether requests carry a credential."""
        return self._key is not None

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()

    # -- what an adapter supplies ------------------------------------------------

    def request_url(self, request: ModelRequest) -> str:
        """The URL to POST ``request`` to."""
        raise NotImplementedError

    def request_headers(self, key: str | None) -> dict[str, str]:
        """The headers of a request, including ``key`` when there is one."""
        raise NotImplementedError

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of ``request``."""
        raise NotImplementedError

    def new_decoder(self, sink: EventSink) -> WireDecoder:
        """A decoder for one attempt's stream."""
        raise NotImplementedError

    # -- the exchange --------------------------------------------------------------

    async def complete(self, request: ModelRequest, sink: EventSink) -> ModelOutput:
        """Stream ``request`` into ``sink`` through the retry ladder.

        The body is checked for the server's own keys before it is sent
        (see :class:`~rhema_lsp.providers.secrets.KeyGuard`).
        """
        url = self.request_url(request)
        body = json.dumps(self.request_body(request), ensure_ascii=False).encode("utf-8")
        body = self._guard.scrub(body, self.name)
        key = self._key.reveal() if self._key is not None else None
        headers = self.request_headers(key)

        async def attempt(tracking: ContentTrackingSink) -> ModelOutput:
            return await self._attempt(url, body, headers, tracking, key)

        return await self.retry.run(attempt, sink)

    async def _attempt(
        self,
        url: str,
        body: bytes,
        headers: dict[str, str],
        sink: EventSink,
        key: str | None,
    ) -> ModelOutput:
        logger.debug("%s: POST %s (%d bytes)", self.name, url, len(body))
        decoder = self.new_decoder(sink)
        with anyio.CancelScope() as scope:
            pace = Pace(self.limits, self.stall_timeout, scope)
            return await self._exchange(url, body, headers, decoder, key, pace)
        # Cut by the deadline or the minimum rate: what came before it counts as emitted.
        decoder.flush()
        raise pace.error(self.name)

    async def _exchange(
        self,
        url: str,
        body: bytes,
        headers: dict[str, str],
        decoder: WireDecoder,
        key: str | None,
        pace: Pace,
    ) -> ModelOutput:
        received_bytes = False
        try:
            async with self._client.stream("POST", url, content=body, headers=headers) as response:
                received_bytes = True
                if response.status_code != 200:
                    raise await self._status_error(response, key)
                pace.headers()
                try:
                    return decoder.finish(await _drain(response, decoder, pace))
                except ResponseTooLarge as exc:
                    decoder.flush()
                    raise pace.error(self.name) from exc
                except EventTooLong as exc:
                    decoder.flush()
                    raise event_too_long(self.name, exc.limit) from exc
                except ProviderError as exc:
                    # What the wire sent before its error counts as emitted, in
                    # wire order, however the bytes were split into reads.
                    decoder.flush()
                    # A decoder quotes the wire (its error text, a malformed event),
                    # which may echo the key; it never sees the key to scrub it.
                    exc.message = redact(exc.message, key)
                    exc.args = (exc.message,)
                    raise
                except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
                    # Valid JSON of a shape the decoder does not expect: mapped here,
                    # once, rather than type-checked at every step of every decoder.
                    decoder.flush()
                    detail = redact(f"{type(exc).__name__}: {exc}", key)
                    raise ProviderStreamError(
                        f"{self.name} sent an event this adapter cannot read ({detail}); "
                        "check that rhema.protocol matches the server",
                        transient=False,
                    ) from exc
        except httpx.TimeoutException as exc:
            if not received_bytes:
                raise ProviderConnectError(
                    f"{self.name} did not answer in time ({type(exc).__name__} at "
                    f"{self.base_url}); check that the server is running and reachable"
                ) from exc
            raise ProviderStreamError(
                f"{self.name} stream stalled: no bytes for {self.stall_timeout:g} s",
                transient=True,
            ) from exc
        except httpx.TransportError as exc:
            detail = redact(str(exc) or type(exc).__name__, key)
            if not received_bytes:
                raise ProviderConnectError(
                    f"could not connect to {self.name} at {self.base_url}: {detail}"
                ) from exc
            raise ProviderStreamError(
                f"{self.name} connection dropped mid-stream: {detail}", transient=True
            ) from exc

    async def _status_error(self, response: httpx.Response, key: str | None) -> ProviderHTTPError:
        status = response.status_code
        if 300 <= status < 400:
            location = response.headers.get("location", "(no location)")
            return ProviderHTTPError(
                f"{self.name} answered a redirect (HTTP {status}) to {redact(location, key)}; "
                "redirects are not followed because they could carry the key to another "
                "origin — set rhema.baseUrl to the final URL",
                status=status,
            )
        collected = b""
        async for chunk in response.aiter_bytes():
            collected += chunk
            if len(collected) >= _ERROR_BODY_LIMIT:
                break
        text = redact(error_text(collected[:_ERROR_BODY_LIMIT]), key)
        body = redact(collected[:_ERROR_BODY_LIMIT].decode("utf-8", "replace"), key)
        hint = ""
        if status in (401, 403):
            hint = (
                " — check the API key in the server's environment"
                if self._key is not None
                else " — no key was sent: set the provider's key variable, and for a custom "
                "baseUrl list its origin in RHEMA_KEY_ORIGINS"
            )
        return ProviderHTTPError(
            f"{self.name} answered HTTP {status}: {text}{hint}",
            status=status,
            retry_after=retry_after_seconds(response.headers, self.retry.now),
            body=body,
        )
