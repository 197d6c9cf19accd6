"""The conversation vocabulary: roles, content parts, messages and sessions.

Everything here is a pydantic model and round-trips through JSON exactly: it
is what the session store persists and what providers translate to and from
their wires. Payloads written by older versions keep loading: fields added
later (a tool result's ``code``, a call's ``raw_args`` and ``provider_id``, a
text part's ``provider_data``, the ``provider`` part, the ``image`` part, a
result's ``images``) have defaults or are new types.

An :class:`ImagePart` holds its bytes as base64 in ``data``; the session
store keeps the bytes once in its blobs and stores the part with ``data``
empty and ``sha256`` naming the blob, filling ``data`` back when it reads.

``provider_data`` on a text part, a thinking part, a tool call or a provider
part is opaque to the engine: a provider stores what its wire needs to see
again on the next request (a Gemini thought signature, an Anthropic
redacted-thinking blob, a server tool's call and result) and reads it back
untouched.
"""

from __future__ import annotations

import base64
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Compaction",
    "ImagePart",
    "JsonValue",
    "Message",
    "Part",
    "ProviderPart",
    "Role",
    "Session",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "ToolResult",
]

JsonValue = Any
"""Any JSON value (what ``json.loads`` returns)."""


class Role(StrEnum):
    """Who authored a message."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class TextPart(_Part):
    """Plain text; ``provider_data`` keeps what the wire attached to it (a
    Gemini thought signature)."""

    type: Literal["text"] = "text"
    text: str
    provider_data: JsonValue = None


class ImagePart(_Part):
    """An image the user attached or a tool returned.

    Parameters
    ----------
    media_type
        ``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp`` (as its
        bytes say, see :mod:`.images`).
    data
        The bytes, base64; ``""`` in a stored row (``sha256`` names the blob).
    sha256
        The SHA-256 of the bytes, hex: the blob that holds them.
    size
        The bytes' length.
    name
        Where it came from, for the model and the transcript (a path, ``pasted``).
    """

    type: Literal["image"] = "image"
    media_type: str
    data: str = ""
    sha256: str = ""
    size: int = 0
    name: str = ""

    def raw(self) -> bytes:
        """The image's bytes (empty when only the reference is held)."""
        return base64.b64decode(self.data) if self.data else b""

    @property
    def label(self) -> str:
        """How the image is named in notes: ``image/png a.png, 4035 bytes``."""
        named = f" {self.name}" if self.name else ""
        return f"{self.media_type}{named}, {self.size} bytes"


class ThinkingPart(_Part):
    """A piece of the model's reasoning that the provider asked to keep.

    ``signature`` is the provider's integrity mark (Anthropic refuses a
    thinking block resent without it); ``provider_data`` carries anything
    else the wire needs back, such as redacted thinking.
    """

    type: Literal["thinking"] = "thinking"
    text: str
    signature: str | None = None
    provider_data: JsonValue = None


class ToolCall(_Part):
    """One tool invocation requested by the model.

    Parameters
    ----------
    id
        The call's id, unique within the session (the provider's own unless
        it was missing or already used); the result carries it back.
    name
        The tool to invoke.
    args
        The parsed arguments (``{}`` when the raw text did not parse).
    raw_args
        The argument text exactly as streamed, when the wire sent text; what
        OpenAI-compatible wires resend, and how the engine tells that the
        arguments were not valid JSON.
    provider_data
        Opaque provider metadata that must round-trip with the call.
    provider_id
        The id the provider gave the call when the engine gave it another
        (see :mod:`.ids`): ``None`` when ``id`` is the provider's own, or the
        provider gave none.
    """

    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    args: JsonValue = Field(default_factory=dict)
    raw_args: str | None = None
    provider_data: JsonValue = None
    provider_id: str | None = None


class ToolResult(_Part):
    """The outcome of one tool call, appended as a ``tool``-role message.

    ``code`` is the exit code of command-like tools, ``None`` otherwise: it is
    metadata for the editor; the model reads the status from ``content``.
    ``images`` are what the tool returned besides its text (an MCP server's
    screenshot): in the result where the wire allows it, else right after.
    """

    type: Literal["tool_result"] = "tool_result"
    id: str
    content: str
    is_error: bool = False
    code: int | None = None
    images: tuple[ImagePart, ...] = ()

    @classmethod
    def success(cls, call_id: str, content: str, *, code: int | None = None) -> ToolResult:
        """A successful result for ``call_id``."""
        return cls(id=call_id, content=content, is_error=False, code=code)

    @classmethod
    def failure(cls, call_id: str, content: str, *, code: int | None = None) -> ToolResult:
        """A failed result for ``call_id``; ``content`` says what went wrong."""
        return cls(id=call_id, content=content, is_error=True, code=code)


class ProviderPart(_Part):
    """Content the provider made and acts on itself, kept to be sent back.

    A server-side tool's call and its result (Anthropic's web search, web
    fetch, code execution, MCP; Gemini's code execution), or a context
    compaction. The engine never runs it; ``wire`` names the wire that made
    it (``anthropic``, ``gemini``), which alone resends ``provider_data``
    verbatim, and ``kind`` is the wire's own name for it
    (``server_tool_use``, ``web_search_tool_result``, ``executableCode``).
    """

    type: Literal["provider"] = "provider"
    wire: str
    kind: str
    provider_data: JsonValue = None


Part = Annotated[
    TextPart | ImagePart | ThinkingPart | ToolCall | ToolResult | ProviderPart,
    Field(discriminator="type"),
]
"""One content part of a message."""


class Message(BaseModel):
    """One message of the conversation: a role and its ordered parts."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: list[Part] = Field(default_factory=list)

    @classmethod
    def user(cls, text: str) -> Message:
        """A plain user message."""
        return cls(role=Role.USER, content=[TextPart(text=text)])

    @classmethod
    def assistant(cls, text: str) -> Message:
        """A plain assistant message."""
        return cls(role=Role.ASSISTANT, content=[TextPart(text=text)])

    @property
    def text(self) -> str:
        """The concatenated text parts."""
        return "".join(part.text for part in self.content if isinstance(part, TextPart))

    @property
    def images(self) -> list[ImagePart]:
        """The image parts, in order (not those inside tool results)."""
        return [part for part in self.content if isinstance(part, ImagePart)]

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls, in order."""
        return [part for part in self.content if isinstance(part, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        """The tool results, in order."""
        return [part for part in self.content if isinstance(part, ToolResult)]


class Compaction(BaseModel):
    """A record that the older part of a history was summarised to fit the
    model's context window. Appended, never rewritten: the history itself
    stays whole, and the latest record decides what the model sees.

    Parameters
    ----------
    upto
        ``history[:upto]`` is replaced by the summary in the model's view.
    summary
        The text of the user-role message that stands for it: the model's
        summary and the user's own messages of that part, quoted.
    pinned
        The index of the current turn's instruction when it lies inside the
        summarised part: it is kept verbatim after the summary.
    dropped
        No summary could be written: the oldest rounds were dropped with a
        note (the user's messages are still quoted).
    before, after
        The estimated input tokens of a request before and after.
    summary_tokens
        What the summary call wrote (its output tokens).
    """

    model_config = ConfigDict(frozen=True)

    upto: int = Field(ge=0)
    summary: str
    pinned: int | None = None
    dropped: bool = False
    before: int = 0
    after: int = 0
    summary_tokens: int = 0


class Session(BaseModel):
    """A conversation: the history every step reads and appends to, and the
    compactions that shorten what the model is sent of it."""

    history: list[Message] = Field(default_factory=list)
    compactions: list[Compaction] = Field(default_factory=list)

    @property
    def compaction(self) -> Compaction | None:
        """The latest compaction, the one the view follows."""
        return self.compactions[-1] if self.compactions else None

    def view(self) -> list[Message]:
        """What the model is sent of the history: the whole history, or after
        a compaction its summary (a user message), the pinned instruction,
        then every message from ``upto`` on, verbatim."""
        latest = self.compaction
        if latest is None:
            return list(self.history)
        out = [Message.user(latest.summary)]
        if latest.pinned is not None and latest.pinned < latest.upto:
            out.append(self.history[latest.pinned])
        out.extend(self.history[latest.upto :])
        return out
