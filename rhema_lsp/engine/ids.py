"""Tool-call ids unique within a session, assigned by the engine.

A call keeps the id its provider gave it when that id is not empty and not
used yet, in the session's history or earlier in the same answer. Otherwise
(a provider that sends none, a fallback such as ``call_1`` that every
id-less OpenAI-compatible answer repeats, Gemini's per-answer
``gemini_call_N``, a provider that reuses its own) the engine gives it
``rhema_N``, ``N`` the call's number in the session, or the next number not
yet used, and keeps the provider's own as :attr:`ToolCall.provider_id`.

The ids come from the history alone, so a session reopened from the store in
another process goes on with fresh ones. A call's id is decided when the
provider announces it (``ToolCallStart``), so every event of the call, its
result and what the front doors show carry the session's id from the first
event on; the answer's calls take the ids announced for their provider ids,
in order, and a call that was never announced gets one when the answer ends.

Every wire is then sent the session's id, for the call and for its result:
each pairs them by whatever id the request gives both, and Anthropic refuses
a request that uses one id twice, which resending a provider's repeated id
would do. ``provider_id`` stays on the record for any wire that must see its
own again.
"""

from __future__ import annotations

from collections.abc import Sequence

from rhema_lsp.engine.events import Event, EventSink, ToolCallArgsDelta, ToolCallStart
from rhema_lsp.engine.messages import Message, ToolCall, ToolResult
from rhema_lsp.engine.output import ModelOutput

__all__ = ["ENGINE_ID_PREFIX", "CallIds", "session_ids"]

ENGINE_ID_PREFIX = "rhema_"
"""The prefix of the ids the engine assigns (``rhema_7``)."""


def session_ids(history: Sequence[Message]) -> tuple[set[str], int]:
    """The call and result ids used in ``history``, and how many calls it holds."""
    used: set[str] = set()
    calls = 0
    for message in history:
        for part in message.content:
            if isinstance(part, ToolCall):
                used.add(part.id)
                calls += 1
            elif isinstance(part, ToolResult):
                used.add(part.id)
    return used, calls


class CallIds:
    """The ids of one model call's tool calls, against a session's history.

    :meth:`sink` renames the provider's events as they stream; :meth:`finish`
    gives the answer's calls the same ids.
    """

    __slots__ = ("_announced", "_calls", "_taken", "_used")

    def __init__(self, history: Sequence[Message]) -> None:
        self._used, self._calls = session_ids(history)
        # Provider id -> the session ids announced for it, in order (a provider
        # may reuse one id within an answer too).
        self._announced: dict[str, list[str]] = {}
        self._taken: dict[str, int] = {}

    def sink(self, inner: EventSink) -> EventSink:
        """A sink that forwards to ``inner`` with each call's session id."""
        return _RenamingSink(self, inner)

    def start(self, provider_id: str) -> str:
        """The session id of a call the provider announces as ``provider_id``."""
        assigned = self._assign(provider_id)
        self._announced.setdefault(provider_id, []).append(assigned)
        return assigned

    def current(self, provider_id: str) -> str:
        """The session id of the latest call announced as ``provider_id``."""
        announced = self._announced.get(provider_id)
        return announced[-1] if announced else self.start(provider_id)

    def finish(self, output: ModelOutput) -> ModelOutput:
        """``output`` with every call under its session id (the same object
        when no call's id changed)."""
        content = output.message.content
        if not any(isinstance(part, ToolCall) for part in content):
            return output
        renamed = False
        parts = []
        for part in content:
            if isinstance(part, ToolCall):
                assigned = self._take(part.id)
                if assigned != part.id:
                    part = part.model_copy(update={"id": assigned, "provider_id": part.id or None})
                    renamed = True
            parts.append(part)
        if not renamed:
            return output
        message = Message(role=output.message.role, content=parts)
        return output.model_copy(update={"message": message})

    def _take(self, provider_id: str) -> str:
        """The next session id announced for ``provider_id``, or a new one."""
        announced = self._announced.get(provider_id, ())
        taken = self._taken.get(provider_id, 0)
        if taken < len(announced):
            self._taken[provider_id] = taken + 1
            return announced[taken]
        return self._assign(provider_id)

    def _assign(self, provider_id: str) -> str:
        self._calls += 1
        if provider_id and provider_id not in self._used:
            assigned = provider_id
        else:
            number = self._calls
            while f"{ENGINE_ID_PREFIX}{number}" in self._used:
                number += 1
            assigned = f"{ENGINE_ID_PREFIX}{number}"
        self._used.add(assigned)
        return assigned


class _RenamingSink:
    """Forwards every event, a call's start and argument pieces under the
    call's session id."""

    __slots__ = ("ids", "inner")

    def __init__(self, ids: CallIds, inner: EventSink) -> None:
        self.ids = ids
        self.inner = inner

    def emit(self, event: Event) -> None:
        kind = type(event)
        if kind is ToolCallArgsDelta:
            assert isinstance(event, ToolCallArgsDelta)
            assigned = self.ids.current(event.id)
            if assigned != event.id:
                event = ToolCallArgsDelta(assigned, event.delta)
        elif kind is ToolCallStart:
            assert isinstance(event, ToolCallStart)
            assigned = self.ids.start(event.id)
            if assigned != event.id:
                event = ToolCallStart(assigned, event.name)
        self.inner.emit(event)
