"""How the providers layer fails: every error is an engine ``ProviderError``.

::

    rhema_lsp.engine.ProviderError   the seam's root: message, transient, status, retry_after
    ├── ProviderConfigError          no usable provider, or a refused setting (never transient)
    ├── ProviderConnectError         no connection, or no first byte in time (transient)
    ├── ProviderHTTPError            the endpoint answered an error status (transient by status)
    └── ProviderStreamError          the stream broke, stalled, was malformed or ended early

Messages say what to do next and never contain a key: :func:`redact` scrubs
every text that came from the wire before it becomes part of an error.
:func:`context_overflow` recognises each wire's "the prompt is too long for
the window" error, which the engine answers with a compaction and one retry.
"""

from __future__ import annotations

import re

from rhema_lsp.engine import ProviderError

__all__ = [
    "TRANSIENT_STATUSES",
    "ProviderConfigError",
    "ProviderConnectError",
    "ProviderHTTPError",
    "ProviderStreamError",
    "context_overflow",
    "redact",
]

TRANSIENT_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth another attempt: timeouts, conflicts, rate limits, overloads."""


_OVERFLOW = re.compile(
    r"prompt is too long"  # Anthropic
    r"|context_length_exceeded|maximum context length"  # OpenAI, vLLM, OpenRouter, Groq
    r"|input token count.*exceeds|exceeds the maximum number of tokens"  # Gemini
    r"|exceed_context_size|exceeds the available context size"  # llama.cpp
    r"|context length|context window|too many tokens|prompt too long",  # Ollama, LM Studio
    re.IGNORECASE | re.DOTALL,
)
_WINDOW = (
    re.compile(r"tokens? > (\d+) maximum"),  # Anthropic: "215000 tokens > 200000 maximum"
    re.compile(r"maximum context length is (\d+)"),  # OpenAI-compatible
    re.compile(r"maximum number of tokens allowed \((\d+)\)"),  # Gemini
    re.compile(r'"n_ctx"\s*:\s*(\d+)'),  # llama.cpp's error body
    re.compile(r"context (?:window|length) of (?:only )?(\d+)"),  # llama-cpp-python, LM Studio
)


def context_overflow(status: int | None, text: str) -> tuple[bool, int | None]:
    """Whether an error (its HTTP status, and the error body or message) says
    the request is too long for the model's context window, and the window
    it names, if any. Only client errors (400, 413) and statusless errors
    (an exception of an in-process model) count."""
    if status is not None and status not in (400, 413):
        return False, None
    if not _OVERFLOW.search(text):
        return False, None
    for pattern in _WINDOW:
        found = pattern.search(text)
        if found:
            return True, int(found.group(1))
    return True, None


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

    def __init__(
        self,
        message: str,
        *,
        status: int,
        retry_after: float | None = None,
        body: str = "",
    ) -> None:
        overflow, window = context_overflow(status, body or message)
        super().__init__(
            message,
            transient=status in TRANSIENT_STATUSES,
            status=status,
            retry_after=retry_after,
            context_overflow=overflow,
            context_window=window,
        )


class ProviderStreamError(ProviderError):
    """The response stream broke, stalled, was malformed, or ended without its
    terminator. Transient only when nothing of the answer had been emitted."""
