"""The retry ladder: which failures are tried again, and how long to wait.

A failure is retried when it is transient (see :mod:`.errors`) *and* no
content delta reached the sink during the attempt: once text, thinking, a
tool call or a provider's own tool use was emitted, trying again would repeat
it, so the call fails with a "stream broke mid-answer" error instead. Before
each wait the ladder emits ``RetryWait``; the wait is an anyio sleep, so
cancellation interrupts it at once.

Delay: the server's ``retry-after-ms``, then ``retry-after`` (seconds or an
HTTP date) when ``0 < delay <= 60`` s; otherwise ``min(0.5 * 2**n, 8)`` s with
±20 % jitter, ``n`` counting failed attempts from zero. The clock, the sleep
and the jitter source are injectable so tests observe delays without waiting.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TypeVar

import anyio

from rhema_lsp.engine import (
    Event,
    EventSink,
    ProviderError,
    ProviderToolUse,
    RetryWait,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallStart,
)
from rhema_lsp.providers.errors import ProviderStreamError

__all__ = ["MAX_SERVER_DELAY", "ContentTrackingSink", "RetryPolicy", "retry_after_seconds"]

MAX_SERVER_DELAY = 60.0
"""A server-requested delay longer than this is ignored in favour of backoff."""

_CONTENT_EVENTS = (TextDelta, ThinkingDelta, ToolCallStart, ToolCallArgsDelta, ProviderToolUse)

T = TypeVar("T")


class ContentTrackingSink:
    """Forwards events and notes whether any content delta went through."""

    __slots__ = ("content_emitted", "inner")

    def __init__(self, inner: EventSink) -> None:
        self.inner = inner
        self.content_emitted = False

    def emit(self, event: Event) -> None:
        if not self.content_emitted and isinstance(event, _CONTENT_EVENTS):
            self.content_emitted = True
        self.inner.emit(event)


def retry_after_seconds(headers: Mapping[str, str], now: Callable[[], float]) -> float | None:
    """The delay a response asked for, from ``retry-after-ms`` then ``retry-after``.

    Returns ``None`` when neither header is present or parses.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - now()


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts a call gets and how the waits between them are spent.

    Parameters
    ----------
    attempts
        Attempts in total (at least one).
    sleep
        Awaited for each wait; ``anyio.sleep`` unless a test injects its own.
    jitter
        Returns a number in ``[0, 1)``; spreads the exponential backoff.
    now
        Wall-clock seconds, for ``retry-after`` HTTP dates.
    """

    attempts: int = 4
    sleep: Callable[[float], Awaitable[None]] = field(default=anyio.sleep)
    jitter: Callable[[], float] = field(default=_random.random)
    now: Callable[[], float] = field(default=time.time)

    def delay(self, failed_before: int, retry_after: float | None) -> float:
        """Seconds to wait after the ``failed_before``-th (zero-based) failure."""
        if retry_after is not None and 0 < retry_after <= MAX_SERVER_DELAY:
            return retry_after
        base = min(0.5 * 2.0**failed_before, 8.0)
        return min(base * (0.8 + 0.4 * self.jitter()), 8.0)

    async def run(
        self,
        attempt: Callable[[ContentTrackingSink], Awaitable[T]],
        sink: EventSink,
    ) -> T:
        """Run ``attempt`` until it succeeds, fails for good, or attempts run out.

        Raises
        ------
        ProviderError
            The last failure; a mid-answer break is never retried.
        """
        total = max(1, self.attempts)
        for number in range(1, total + 1):
            tracking = ContentTrackingSink(sink)
            try:
                return await attempt(tracking)
            except ProviderError as error:
                if tracking.content_emitted:
                    raise _mid_answer(error) from error
                if not error.transient or number == total:
                    if error.transient and total > 1:
                        raise _gave_up(error, total) from error
                    raise
                delay = self.delay(number - 1, error.retry_after)
                sink.emit(
                    RetryWait(error=str(error), delay_seconds=delay, attempt=number, total=total)
                )
                await self.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")


def _mid_answer(error: ProviderError) -> ProviderError:
    if isinstance(error, ProviderStreamError) and not error.transient:
        return error
    return ProviderStreamError(
        f"the stream broke mid-answer ({error}); the partial answer was not kept — "
        "send a follow-up to try again",
        transient=False,
        status=error.status,
    )


def _gave_up(error: ProviderError, total: int) -> ProviderError:
    return ProviderError(
        f"{error} (gave up after {total} attempts; try again later)",
        transient=True,
        status=error.status,
        retry_after=error.retry_after,
    )
