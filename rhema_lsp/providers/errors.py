"""How the providers layer fails: every error is an engine ``ProviderError``.

::

    rhema_lsp.engine.ProviderError   the seam's root: message, transient, status, retry_after
    ├── ProviderConfigError          no usable provider, or a refused setting (never transient)
    ├── ProviderConnectError         no connection, or no first byte in time (transient)
    ├── ProviderHTTPError            the endpoint answered an error status (transient by status)
    └── ProviderStreamError          the stream broke, stalled, was malformed or ended early

Messages say what to do next and never contain a key: :func:`redact` scrubs
every text that came from the wire before it becomes part of an error.
"""

from __future__ import annotations

from rhema_lsp.engine import ProviderError

__all__ = [
    "TRANSIENT_STATUSES",
    "ProviderConfigError",
    "ProviderConnectError",
    "ProviderHTTPError",
    "ProviderStreamError",
    "redact",
]

TRANSIENT_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth another attempt: timeouts, conflicts, rate limits, overloads."""


def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced by ``[redacted]``."""
    if secret:
        return text.replace(secret, "[redacted]")
    return text


class ProviderConfigError(ProviderError):
    """No provider could be configured, or a setting was refused.

    The message says exactly how to fix the configuration.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, transient=False)


class ProviderConnectError(ProviderError):
    """The endpoint could not be reached, or sent nothing before the timeout."""

    def __init__(self, message: str) -> None:
        super().__init__(message, transient=True)


class ProviderHTTPError(ProviderError):
    """The endpoint answered with an error status; the message carries its own text."""

    def __init__(self, message: str, *, status: int, retry_after: float | None = None) -> None:
        super().__init__(
            message,
            transient=status in TRANSIENT_STATUSES,
            status=status,
            retry_after=retry_after,
        )


class ProviderStreamError(ProviderError):
    """The response stream broke, stalled, was malformed, or ended without its
    terminator. Transient only when nothing of the answer had been emitted."""
