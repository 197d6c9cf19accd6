"""What comes back from the model: the assistant message, why it stopped, and
what it cost."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from rhema_lsp.engine.messages import Message

__all__ = ["ModelOutput", "Step", "StopReason", "Usage"]


class StopReason(StrEnum):
    """Why the model stopped producing output."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    PAUSE_TURN = "pause_turn"
    """The provider paused its own long-running tool work (Anthropic's server
    tools); sending the conversation back, paused message included, continues it."""


class Usage(BaseModel):
    """Token accounting for one model call, or a running sum of several.

    ``input`` counts every input token, cached or not; ``cache_read`` and
    ``cache_write`` say how many of them the provider read from or wrote to
    its prompt cache, where the wire reports it (zero otherwise).
    """

    model_config = ConfigDict(frozen=True)

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
        )


class ModelOutput(BaseModel):
    """One finished model call: the assistant message, the stop reason and the
    usage the wire reported."""

    message: Message
    stop_reason: StopReason
    usage: Usage = Usage()


@dataclass(frozen=True, slots=True)
class Step:
    """The outcome of one :meth:`~rhema_lsp.engine.Agent.step`."""

    output: ModelOutput
