"""What every wire's decoder shares: one event's JSON, and the batching of
its deltas.

A decoder reads an event's data with :func:`decode_event` into its wire's
typed envelope (msgspec structs naming only the fields the adapter reads) or
with :func:`parse_event` (orjson); both are several times faster than
``json.loads`` on these small events. :class:`EventBatcher` emits what one
network read carried as few engine events as keep their order.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import msgspec
import orjson

from rhema_lsp.engine import Event, EventSink, TextDelta, ThinkingDelta, Usage, UsageUpdate
from rhema_lsp.providers.errors import ProviderStreamError

__all__ = ["EventBatcher", "decode_event", "parse_event", "parse_json", "tool_args"]

Envelope = TypeVar("Envelope")


def parse_json(data: bytes) -> Any:
    """One event's data as a JSON value.

    orjson decodes it, exactly as ``json.loads`` would except that an integer
    beyond 64 bits becomes a float (JSON's number model allows either); what
    orjson refuses but the JSON grammar allows (a lone surrogate escape) is
    decoded by ``json.loads``.

    Raises
    ------
    ValueError
        When ``data`` is not exactly one JSON value.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def parse_event(name: str, data: bytes) -> Any:
    """:func:`parse_json` for a decoder: data that is not JSON is a transient
    :class:`ProviderStreamError` (a cut or garbled event) naming provider ``name``."""
    try:
        return parse_json(data)
    except ValueError as exc:
        raise ProviderStreamError(
            f"{name} sent a malformed event: {data[:200]!r}", transient=True
        ) from exc


def decode_event(name: str, data: bytes, decoder: msgspec.json.Decoder[Envelope]) -> Envelope:
    """One event's data decoded into a wire's typed envelope.

    ``decoder`` (msgspec) reads only the fields its struct declares and skips
    the rest without building them, which is most of an event's bytes. Data
    it refuses goes through :func:`parse_event` and is converted: that reads
    what msgspec refuses but the JSON grammar allows (a number beyond a
    float) and says precisely what is wrong with the rest.

    Raises
    ------
    ProviderStreamError
        Transient, when the data is not JSON (a cut or garbled event).
    msgspec.ValidationError
        When it is JSON of a shape the wire never sends (a ``ValueError``,
        which the exchange reports as an event the adapter cannot read).
    """
    try:
        return decoder.decode(data)
    except msgspec.MsgspecError:
        value = parse_event(name, data)
    converted: Envelope = msgspec.convert(value, decoder.type)
    return converted


def tool_args(raw: str) -> dict[str, Any]:
    """The arguments object of a tool call's streamed JSON text.

    ``{}`` when the text is empty, malformed or not an object: the call is still
    returned (its ``raw_args`` keep the text) and the tool reports the bad arguments.
    """
    if not raw.strip():
        return {}
    try:
        args = json.loads(raw)
    except ValueError:
        return {}
    return args if isinstance(args, dict) else {}


class EventBatcher:
    """Emits a decoder's events one network read at a time.

    A read carries dozens of SSE events; the pieces of text (or reasoning)
    they hold are queued as strings and emitted as one ``TextDelta`` (or
    ``ThinkingDelta``) when the read ends, and the usage tally, which
    replaces rather than adds, once with its latest value. This is the
    provider's hot path, not the merging layer: building and forwarding one
    event per SSE event through the engine's sinks costs about 0.5 µs more a
    delta (``docs/benchmarks.md``). What reaches a client is merged and paced
    by the front door's :class:`~rhema_lsp.runs.merge.DeltaMerger`.
    :meth:`flush` runs after every network read, so no event waits for more
    bytes than it arrived with; nothing is dropped or reordered.
    """

    __slots__ = ("_kind", "_parts", "_usage", "sink")

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self._kind: type[TextDelta] | type[ThinkingDelta] | None = None
        self._parts: list[str] = []
        self._usage: tuple[int, int, int, int] | None = None

    def text(self, text: str) -> None:
        """Queue a piece of answer text."""
        if self._kind is not TextDelta:
            self._flush_parts()
            self._kind = TextDelta
        self._parts.append(text)

    def thinking(self, text: str) -> None:
        """Queue a piece of reasoning."""
        if self._kind is not ThinkingDelta:
            self._flush_parts()
            self._kind = ThinkingDelta
        self._parts.append(text)

    def usage(
        self, input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0
    ) -> None:
        """Record the latest cumulative usage (``input_tokens`` counts the cached ones too)."""
        self._usage = (input_tokens, output_tokens, cache_read, cache_write)

    def emit(self, event: Event) -> None:
        """Emit ``event`` after what is queued before it."""
        self._flush_parts()
        self.sink.emit(event)

    def _flush_parts(self) -> None:
        if self._parts:
            kind = self._kind
            assert kind is not None
            self.sink.emit(kind("".join(self._parts)))
            self._parts = []
        self._kind = None

    def flush(self) -> None:
        """Emit everything queued."""
        self._flush_parts()
        if self._usage is not None:
            tally = Usage.model_construct(
                input=self._usage[0],
                output=self._usage[1],
                cache_read=self._usage[2],
                cache_write=self._usage[3],
            )
            self._usage = None
            self.sink.emit(UsageUpdate(tally))
