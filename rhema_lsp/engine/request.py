"""What goes to the model: the assembled request and its parameters."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from rhema_lsp.engine.messages import JsonValue, Message

__all__ = ["ChatParams", "ModelRequest", "ThinkingEffort", "ToolSpec"]


class ToolSpec(BaseModel):
    """A tool advertised to the model: its name, what it does, and the JSON
    schema of its arguments."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: JsonValue = Field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []}
    )


class ThinkingEffort(StrEnum):
    """How much reasoning the model should do.

    Each provider maps it onto its own request parameter (OpenAI-compatible
    ``reasoning_effort``, OpenRouter's ``reasoning.effort``, Anthropic's and
    Gemini's thinking budgets). ``DEFAULT`` sends nothing: the server's own
    default stands, which keeps strict endpoints happy.
    """

    DEFAULT = "default"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @classmethod
    def parse(cls, text: str) -> ThinkingEffort | None:
        """Parse a level name, ignoring case and surrounding space.

        Returns
        -------
        ThinkingEffort or None
            The level, or ``None`` for anything that is not a level name.
        """
        try:
            return cls(text.strip().lower())
        except ValueError:
            return None


class ChatParams(BaseModel):
    """Sampling parameters stamped into every request.

    ``thinking`` defaults to ``DEFAULT`` so payloads written before the field
    existed load unchanged.
    """

    model: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    thinking: ThinkingEffort = ThinkingEffort.DEFAULT


class ModelRequest(BaseModel):
    """The full request handed to a provider for one exchange."""

    system: str | None = None
    messages: list[Message] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    params: ChatParams = Field(default_factory=ChatParams)
