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


class Usage(BaseModel):
    """Token accounting for one model call, or a running sum of several."""

    model_config = ConfigDict(frozen=True)

    input: int = 0
    output: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(input=self.input + other.input, output=self.output + other.output)


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
