"""How long and how large one response may be, besides the per-read timeout.

The per-read (stall) timeout cuts a stream that sends nothing; these limits
cut the ones that never quite stop:

- **the whole-response deadline**: ``response_timeout`` seconds from the
  request to the stream's end (setting ``responseTimeout``, default 600 s,
  the official SDKs' own request timeout);
- **the minimum rate**: once its headers arrived, a response has ``grace``
  seconds free (by default 5 s past the stall timeout, so that a silent
  stream is always the stall's to end), then must keep an average of
  ``min_rate`` bytes a minute since its headers (setting ``minStreamRate``,
  default 128; ``0`` turns the check off). Each byte moves the cut later by
  ``60 / min_rate`` seconds, as Apache's ``mod_reqtimeout`` ``MinRate``
  does: a keep-alive every few seconds passes, one byte every two seconds
  is cut in under three minutes;
- **the size cap**: ``max_bytes`` (32 MiB) for the whole response, and
  :data:`~rhema_lsp.providers.sse.MAX_EVENT_BYTES` for one event.

:class:`Pace` keeps an attempt's ``anyio.CancelScope`` deadline where the
first two limits put it, moving it only when it would move by a second or
more (a timer reschedule per network read would cost more than the read).
Every cut is a non-transient :class:`ProviderStreamError` saying what
happened and which setting moves the limit: it is never retried, since a
retry would wait as long again.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from rhema_lsp.providers.errors import ProviderStreamError

__all__ = [
    "MAX_RESPONSE_BYTES",
    "MIN_STREAM_RATE",
    "RATE_GRACE_MARGIN",
    "RESPONSE_TIMEOUT",
    "Pace",
    "ResponseLimits",
    "ResponseTooLarge",
    "event_too_long",
]

RESPONSE_TIMEOUT = 600.0
"""Seconds one response may take from request to end (``responseTimeout``)."""

MIN_STREAM_RATE = 128.0
"""Bytes a minute a response must average after its grace (``minStreamRate``)."""

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""The most one response may send: 32 MiB (a 64k-token answer, one event a
token, is about 13 MiB of server-sent events)."""

RATE_GRACE_MARGIN = 5.0
"""Seconds past the stall timeout that the minimum rate's grace lasts by default."""

_MOVE_STEP = 1.0
"""Seconds the rate's cut must move by before the scope's deadline is moved."""


@dataclass(frozen=True, slots=True)
class ResponseLimits:
    """The limits of one response (see the module docstring).

    Parameters
    ----------
    response_timeout
        Seconds from the request to the stream's end.
    min_rate
        Bytes a minute a response must average after ``grace``; ``0`` for none.
    max_bytes
        The most bytes one response may send.
    grace
        Seconds after the headers before the minimum rate applies; ``None``
        for :data:`RATE_GRACE_MARGIN` past the provider's stall timeout.
    """

    response_timeout: float = RESPONSE_TIMEOUT
    min_rate: float = MIN_STREAM_RATE
    max_bytes: int = MAX_RESPONSE_BYTES
    grace: float | None = None


class ResponseTooLarge(Exception):
    """A response passed its size cap; :meth:`Pace.error` says it to the user."""


class Pace:
    """One attempt's deadline and byte count.

    Parameters
    ----------
    limits
        The limits to keep.
    stall_timeout
        The provider's stall timeout, which the default grace follows.
    scope
        The attempt's cancel scope; its deadline is set here.
    """

    __slots__ = ("_grace", "_hard", "_limits", "_moved", "_per_byte", "_scope", "_start", "size")

    def __init__(
        self, limits: ResponseLimits, stall_timeout: float, scope: anyio.CancelScope
    ) -> None:
        self._limits = limits
        grace = limits.grace
        self._grace = stall_timeout + RATE_GRACE_MARGIN if grace is None else grace
        self._scope = scope
        self._start = anyio.current_time()
        self._hard = self._start + limits.response_timeout
        self._per_byte = 60.0 / limits.min_rate if limits.min_rate > 0 else 0.0
        self._moved = self._hard
        self.size = 0
        scope.deadline = self._hard

    def headers(self) -> None:
        """The response's headers arrived: the minimum rate starts counting."""
        if self._per_byte:
            self._start = anyio.current_time()
            self._moved = min(self._hard, self._start + self._grace)
            self._scope.deadline = self._moved

    def add(self, count: int) -> None:
        """``count`` more bytes arrived.

        Raises
        ------
        ResponseTooLarge
            Past the size cap.
        """
        self.size += count
        if self.size > self._limits.max_bytes:
            raise ResponseTooLarge()
        if self._per_byte:
            cut = self._start + self._grace + self.size * self._per_byte
            if cut >= self._moved + _MOVE_STEP and self._moved < self._hard:
                self._moved = min(self._hard, cut)
                self._scope.deadline = self._moved

    def error(self, name: str) -> ProviderStreamError:
        """What cut the stream, for the user: the deadline, the rate or the size."""
        limits = self._limits
        if self.size > limits.max_bytes:
            return ProviderStreamError(
                f"{name} sent more than {limits.max_bytes // (1024 * 1024)} MiB for one answer, "
                "the most rhema-lsp reads of a response: the stream was cut. No model's answer "
                "is that large; check that rhema.baseUrl points at a model server",
                transient=False,
            )
        now = anyio.current_time()
        if now >= self._hard or not self._per_byte:
            return ProviderStreamError(
                f"{name} did not finish its answer within {limits.response_timeout:g} s "
                f"(rhema.responseTimeout) and was cut after {self.size} bytes; raise "
                "rhema.responseTimeout for answers that take longer, or check the server",
                transient=False,
            )
        elapsed = now - self._start
        return ProviderStreamError(
            f"{name} streamed {self.size} bytes in {elapsed:.0f} s, slower than "
            f"{limits.min_rate:g} bytes a minute (rhema.minStreamRate), and was cut; a model "
            "server streams far faster, so check the server, or lower rhema.minStreamRate "
            "(0 turns the check off)",
            transient=False,
        )


def event_too_long(name: str, limit: int) -> ProviderStreamError:
    """The error of a stream whose event passed ``limit`` bytes without ending."""
    return ProviderStreamError(
        f"{name} sent an event longer than {limit // (1024 * 1024)} MiB without ending it "
        "(no blank line), which no model server sends: the stream was refused; check that "
        "rhema.baseUrl points at a model server that streams server-sent events",
        transient=False,
    )
