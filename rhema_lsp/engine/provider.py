"""The model seam: one streamed exchange with a model, and how it fails.

A :class:`ModelProvider` streams one request into an :class:`EventSink` and
returns the finished :class:`ModelOutput`. It owns its wire, its retries and
its timeouts; the engine only sees the deltas and the outcome. A failure is a
:class:`ProviderError` that says whether trying again could help.
"""

from __future__ import annotations

from typing import Protocol

from rhema_lsp.engine.events import EventSink
from rhema_lsp.engine.output import ModelOutput
from rhema_lsp.engine.request import ModelRequest

__all__ = ["ModelProvider", "ProviderError"]


class ProviderError(Exception):
    """A model call failed.

    Parameters
    ----------
    message
        What went wrong, in the words the user should see (never a key).
    transient
        Whether the same request could succeed if tried again (overload,
        rate limit, a dropped connection before any output).
    status
        The HTTP status, when the failure came with one.
    retry_after
        Seconds the server asked the client to wait, when it said.
    context_overflow
        The request did not fit the model's context window ("prompt is too
        long"): the same request never succeeds, a shorter one may.
    context_window
        The window the error named, in tokens, when it did.
    """

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        context_overflow: bool = False,
        context_window: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient
        self.status = status
        self.retry_after = retry_after
        self.context_overflow = context_overflow
        self.context_window = context_window

    def __str__(self) -> str:
        return self.message


class ModelProvider(Protocol):
    """A model backend: streams one request, returns the finished output."""

    async def complete(self, request: ModelRequest, sink: EventSink) -> ModelOutput:
        """Stream one exchange.

        Emits ``ThinkingDelta``, ``TextDelta``, ``ToolCallStart``,
        ``ToolCallArgsDelta``, ``UsageUpdate`` and ``RetryWait`` to ``sink``
        as the wire delivers them.

        Raises
        ------
        ProviderError
            When the call fails for good.
        """
        ...
