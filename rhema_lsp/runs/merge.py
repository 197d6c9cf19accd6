"""The one place where a run's streamed deltas are merged.

The engine forwards every event as it happens (a provider hands over what
one network read delivered, see
:class:`~rhema_lsp.providers.decoding.EventBatcher`); a front door's sink
puts a :class:`DeltaMerger` in front of what it sends, and decides when to
:meth:`~DeltaMerger.flush` (the LSP server after a short window, the ACP
agent whenever its client is ready for the next update). The merger itself
has no clock and no I/O.

What merges: adjacent deltas of the same type and the same call id
(``text_delta``, ``thinking_delta``, ``tool_call_args_delta``,
``tool_output_delta``) join into one event, their pieces concatenated, and
so do a subagent's (adjacent ``ChildEvent`` wrappers of one task call
around such deltas join inside their wrapper); the
usage tally, which replaces rather than adds, is held with its latest value
and delivered after the delta held with it. Any other event first delivers
what is held, then itself, so nothing is dropped or reordered (the tally,
a running total, is the one event that may be delivered after deltas that
followed it).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from rhema_lsp.engine import (
    ChildEvent,
    Event,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolOutputDelta,
    UsageUpdate,
)

__all__ = ["DeltaMerger"]

_MERGEABLE: dict[type[Any], tuple[Callable[[Any], str], Callable[[Any, str], Event]]] = {
    TextDelta: (attrgetter("text"), lambda first, text: TextDelta(text)),
    ThinkingDelta: (attrgetter("text"), lambda first, text: ThinkingDelta(text)),
    ToolCallArgsDelta: (attrgetter("delta"), lambda first, text: ToolCallArgsDelta(first.id, text)),
    ToolOutputDelta: (attrgetter("chunk"), lambda first, text: ToolOutputDelta(first.id, text)),
}
"""Each mergeable delta type: how to read its piece, and how to rebuild the
first delta of a run with the joined pieces."""


class _CHILD:
    """The held kind of a subagent's delta (no event is of this type)."""


class DeltaMerger:
    """Holds the stream's latest delta, joining the ones that continue it.

    Parameters
    ----------
    deliver
        Receives each event that leaves the merger, in order.
    """

    __slots__ = ("_child", "_deliver", "_first", "_id", "_kind", "_parts", "_piece", "_usage")

    def __init__(self, deliver: Callable[[Event], None]) -> None:
        self._deliver = deliver
        self._kind: type[Any] | None = None
        self._id: str | None = None
        self._first: Event | None = None
        self._parts: list[str] = []
        self._piece: Callable[[Any], str] = str
        self._usage: UsageUpdate | None = None
        self._child: tuple[str, type[Any], str | None] | None = None
        """The held child delta's task call, inner type and inner id."""

    @property
    def pending(self) -> bool:
        """Whether something is held, waiting for :meth:`flush`."""
        return self._first is not None or self._usage is not None

    def emit(self, event: Event) -> bool:
        """Take one event; ``True`` when it is held until the next :meth:`flush`.

        A delta or a usage tally is held; any other event is delivered at
        once, after what was held.
        """
        kind = type(event)
        if kind is self._kind and (self._id is None or self._id == getattr(event, "id", None)):
            # The hot path: a delta that continues the held one costs one append.
            self._parts.append(self._piece(event))
            return True
        mergeable = _MERGEABLE.get(kind)
        if mergeable is not None:
            self._flush_delta()
            self._kind = kind
            self._id = getattr(event, "id", None)
            self._first = event
            self._piece = mergeable[0]
            self._parts = [self._piece(event)]
            return True
        if isinstance(event, UsageUpdate):
            self._usage = event
            return True
        if isinstance(event, ChildEvent) and self._hold_child(event):
            return True
        self.flush()
        self._deliver(event)
        return False

    def _hold_child(self, event: ChildEvent) -> bool:
        inner = event.event
        mergeable = _MERGEABLE.get(type(inner))
        if mergeable is None:
            return False
        key = (event.id, type(inner), getattr(inner, "id", None))
        if self._child == key:
            self._parts.append(mergeable[0](inner))
            return True
        self._flush_delta()
        # Held under a kind no event has: the hot path above never continues it.
        self._kind, self._id, self._first, self._child = _CHILD, None, event, key
        self._parts = [mergeable[0](inner)]
        return True

    def flush(self) -> None:
        """Deliver what is held: the merged delta, then the latest tally."""
        self._flush_delta()
        usage = self._usage
        if usage is not None:
            self._usage = None
            self._deliver(usage)

    def _flush_delta(self) -> None:
        first = self._first
        if first is None:
            return
        parts = self._parts
        self._kind = self._id = self._first = self._child = None
        self._parts = []
        if len(parts) > 1 and isinstance(first, ChildEvent):
            inner = _MERGEABLE[type(first.event)][1](first.event, "".join(parts))
            first = ChildEvent(first.id, first.session, inner)
        elif len(parts) > 1:
            first = _MERGEABLE[type(first)][1](first, "".join(parts))
        self._deliver(first)
