"""The token budget of a request: how big it is, and how big it may be.

No tokenizer: a request's size is counted in bytes of what the model reads
(system prompt, tool specs, the text of every part) and turned into tokens
with a bytes-per-token ratio. The ratio starts conservative
(:data:`DEFAULT_BYTES_PER_TOKEN`) and is calibrated by the ``usage`` the
provider reports for each call of the session, so the estimate follows the
model's own tokenizer and the wire's overhead.

A :class:`ContextBudget` knows the model's window (a preset's, a local
server's report, the embedded model's ``n_ctx``, the ``contextWindow``
setting, or what a "prompt is too long" error revealed) and the fill at
which a request is compacted first (:data:`DEFAULT_THRESHOLD`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import orjson

from rhema_lsp.engine.messages import (
    ImagePart,
    Message,
    ProviderPart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
)
from rhema_lsp.engine.request import ModelRequest, ToolSpec

__all__ = [
    "DEFAULT_BYTES_PER_TOKEN",
    "DEFAULT_THRESHOLD",
    "ContextBudget",
    "TokenEstimator",
    "message_bytes",
    "request_bytes",
]

DEFAULT_BYTES_PER_TOKEN = 3.0
"""Bytes per token before the first calibration: below the 4 of English prose,
so an uncalibrated estimate errs on the large side."""

DEFAULT_THRESHOLD = 0.8
"""A request estimated above this share of the window is compacted first."""

_MESSAGE_OVERHEAD = 12
"""Bytes counted per message and per part for role markers and framing."""

_RATIO_BOUNDS = (1.0, 8.0)
"""Calibrated bytes per token are kept in these bounds: a wire that reports a
nonsense ``usage`` cannot make the estimate useless."""


IMAGE_BYTES = 4800
"""Bytes counted for an image: about 1,600 tokens, what a large image costs
on the wires that say (Anthropic bills width x height / 750, capped)."""


def _part_bytes(part: object) -> int:
    if isinstance(part, ImagePart):
        return IMAGE_BYTES
    if isinstance(part, TextPart | ThinkingPart):
        return len(part.text.encode())
    if isinstance(part, ToolCall):
        raw = part.raw_args if part.raw_args is not None else orjson.dumps(part.args).decode()
        return len(part.name) + len(raw.encode()) + len(part.id)
    if isinstance(part, ToolResult):
        return len(part.content.encode()) + len(part.id) + IMAGE_BYTES * len(part.images)
    if isinstance(part, ProviderPart):
        return len(orjson.dumps(part.provider_data))
    return 0


def message_bytes(message: Message) -> int:
    """The bytes of what the model reads of ``message``."""
    return _MESSAGE_OVERHEAD + sum(_MESSAGE_OVERHEAD + _part_bytes(p) for p in message.content)


def _specs_bytes(specs: list[ToolSpec]) -> int:
    return sum(
        len(spec.name) + len(spec.description.encode()) + len(orjson.dumps(spec.parameters))
        for spec in specs
    )


def request_bytes(request: ModelRequest) -> int:
    """The bytes of what the model reads of ``request``."""
    system = len(request.system.encode()) if request.system else 0
    return system + _specs_bytes(request.tools) + sum(message_bytes(m) for m in request.messages)


@dataclass
class TokenEstimator:
    """Tokens from bytes, calibrated by the provider's reported usage."""

    bytes_per_token: float = DEFAULT_BYTES_PER_TOKEN
    calibrated: bool = False

    def tokens(self, size: int) -> int:
        """The estimated tokens of ``size`` bytes."""
        return math.ceil(size / self.bytes_per_token)

    def estimate(self, request: ModelRequest) -> int:
        """The estimated input tokens of ``request``."""
        return self.tokens(request_bytes(request))

    def calibrate(self, size: int, input_tokens: int) -> None:
        """Learn from a call whose request had ``size`` bytes and cost
        ``input_tokens`` (as the provider reported; 0 teaches nothing)."""
        if size <= 0 or input_tokens <= 0:
            return
        low, high = _RATIO_BOUNDS
        self.bytes_per_token = min(high, max(low, size / input_tokens))
        self.calibrated = True


@dataclass
class ContextBudget:
    """The window a session's requests must fit, and when to compact.

    Parameters
    ----------
    window
        The model's context window in tokens; ``None`` while unknown (then a
        request is compacted only when the provider says it is too long).
    threshold
        The share of ``window`` above which a request is compacted first.
    estimator
        Tokens from bytes, calibrated as the session runs.
    """

    window: int | None = None
    threshold: float = DEFAULT_THRESHOLD
    estimator: TokenEstimator = field(default_factory=TokenEstimator)

    @property
    def limit(self) -> int | None:
        """The most tokens a request may carry before it is compacted."""
        if self.window is None:
            return None
        return int(self.window * self.threshold)

    def over(self, tokens: int) -> bool:
        """Whether a request of ``tokens`` should be compacted first."""
        limit = self.limit
        return limit is not None and tokens > limit

    def learn_window(self, window: int) -> None:
        """The provider revealed the window (a "too long" error named it, or
        a request this size was refused): never assume more than that."""
        if window > 0 and (self.window is None or window < self.window):
            self.window = window

    def target(self, tokens: int) -> int:
        """How big a compacted request should be: half the limit, so the
        session runs a while before compacting again; without a known
        window, half of the ``tokens`` that did not fit."""
        limit = self.limit
        if limit is None:
            return max(1, tokens // 2)
        return max(1, limit // 2)
