"""Compaction: the older rounds of a history, summarised by the model.

:class:`Compactor` shortens what the model is sent of a session by appending
a :class:`~rhema_lsp.engine.Compaction` (never by rewriting the history).
It picks the cut, the earliest round boundary after which the request fits
the target, asks the same provider, with no tools offered, to summarise
everything before it, and records the summary. Its invariants:

- the cut lies at a round boundary (a user message or an assistant message;
  tool results belong to the call before them), so every tool call kept
  verbatim keeps its result, and no result is kept without its call;
- the user's own messages of the summarised part are quoted in the summary
  message, verbatim (each up to :data:`QUOTE_LIMIT` characters, the newest
  first within the quote budget; any left out are counted);
- the current turn's instruction (the last user message) is never
  summarised: when the cut passes it, it is kept verbatim after the summary;
- when no summary can be written (the call fails, or says nothing), the
  older rounds are dropped with a note saying so, and the quotes stay.

The summary call's deltas are not the answer: only its ``RetryWait`` events
reach the sink. A :class:`CompactionEvent` says what the compaction did; it
is emitted only after the compactor's ``commit`` hook (the session store's
commit, when there is one) has made the record durable, so a client never
hears of a compaction a crash could lose.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import orjson

from rhema_lsp.engine.budget import ContextBudget, message_bytes, request_bytes
from rhema_lsp.engine.events import CompactionEvent, ContextFill, Event, EventSink, RetryWait
from rhema_lsp.engine.images import fit_images, support_of
from rhema_lsp.engine.messages import (
    Compaction,
    ImagePart,
    Message,
    Role,
    Session,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
)
from rhema_lsp.engine.provider import ModelProvider, ProviderError
from rhema_lsp.engine.request import ChatParams, ModelRequest, ThinkingEffort, ToolSpec

__all__ = ["QUOTE_LIMIT", "SUMMARY_HEADER", "SUMMARY_SYSTEM", "Compactor", "round_starts"]

SUMMARY_SYSTEM = (
    "You summarise the earlier part of a session between a user and an AI coding agent, so "
    "the agent can carry on without the full transcript. Write a concise summary in Markdown: "
    "what the user asked for, what was done (files read and changed, commands run, their "
    "results), decisions and facts learnt (paths, names, errors), and what is still open. "
    "Keep exact file paths, identifiers and error messages. Do not invent anything, do not "
    "address the user, and do not call tools."
)
"""The system prompt of the summary call."""

SUMMARY_HEADER = "[Compacted conversation]"
"""How the summary message begins, so the model (and a reader) can tell it."""

QUOTE_LIMIT = 1_000
"""Characters of one user message quoted in the summary; longer ones are cut
with a marker saying how much was left out."""

SUMMARY_MAX_TOKENS = 2_048
"""The longest summary asked for; less when the window is small."""

RESULT_LIMIT = 2_000
"""Characters of one tool result shown to the summariser."""


def round_starts(history: list[Message], start: int = 0) -> list[int]:
    """The indices from ``start`` on where a round begins: every message but
    a tool result, which belongs to the call before it."""
    return [i for i in range(start, len(history)) if history[i].role is not Role.TOOL]


def _last_user(history: list[Message]) -> int | None:
    for index in range(len(history) - 1, -1, -1):
        if history[index].role is Role.USER:
            return index
    return None


def _quiet(sink: EventSink) -> EventSink:
    class _RetriesOnly:
        def emit(self, event: Event) -> None:
            if isinstance(event, RetryWait):
                sink.emit(event)

    return _RetriesOnly()


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def _render(message: Message) -> str:
    """One message of the transcript the summariser reads."""
    lines: list[str] = []
    for part in message.content:
        if isinstance(part, TextPart) and part.text.strip():
            lines.append(f"[{message.role.value}] {part.text}")
        elif isinstance(part, ThinkingPart) and part.text.strip():
            lines.append(f"[assistant thinking] {_clip(part.text, RESULT_LIMIT)}")
        elif isinstance(part, ToolCall):
            args = part.raw_args or orjson.dumps(part.args).decode()
            lines.append(f"[assistant called {part.name}] {_clip(args, RESULT_LIMIT)}")
        elif isinstance(part, ToolResult):
            status = "error" if part.is_error else "result"
            lines.append(f"[tool {status}] {_clip(part.content, RESULT_LIMIT)}")
        elif isinstance(part, ImagePart):
            lines.append(f"[{message.role.value} attached an image: {part.label}]")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class _Cut:
    upto: int
    pinned: int | None


CompactionHook = Callable[[Session], Awaitable[None]]
"""Makes a session's new compaction durable before its event is emitted."""


class Compactor:
    """Compacts sessions for one agent's requests.

    Parameters
    ----------
    provider
        Writes the summaries (the agent's own provider).
    budget
        The window, threshold and token estimate of the session.
    system, tools, params
        What the agent's requests carry besides the history, counted in
        every estimate; ``params`` is also the summary call's, without
        thinking and with a smaller ``max_tokens``.
    commit
        Called with the session once a compaction is appended, before its
        events are emitted; what it raises propagates (nothing is emitted).
    """

    def __init__(
        self,
        provider: ModelProvider,
        budget: ContextBudget,
        *,
        system: str | None,
        tools: list[ToolSpec],
        params: ChatParams,
        commit: CompactionHook | None = None,
    ) -> None:
        self.provider = provider
        self.budget = budget
        self.system = system
        self.tools = tools
        self.params = params
        self.commit = commit

    def request(self, session: Session) -> ModelRequest:
        """The agent's request for ``session`` as it stands."""
        return ModelRequest(
            system=self.system,
            messages=fit_images(session.view(), support_of(self.provider)),
            tools=self.tools,
            params=self.params,
        )

    def estimate(self, session: Session) -> int:
        """The estimated input tokens of the next request of ``session``."""
        return self.budget.estimator.estimate(self.request(session))

    def _fixed_bytes(self) -> int:
        return request_bytes(ModelRequest(system=self.system, tools=self.tools))

    def _summary_tokens(self, target: int) -> int:
        return max(64, min(SUMMARY_MAX_TOKENS, target // 4))

    def _plan(self, session: Session, target: int) -> _Cut | None:
        history = session.history
        latest = session.compaction
        start = latest.upto if latest is not None else 0
        last_user = _last_user(history)
        # A cut must summarise something besides the instruction it would pin.
        starts = [
            index
            for index in round_starts(history, start + 1)
            if any(i != last_user for i in range(start, index))
        ]
        if not starts:
            return None
        estimator = self.budget.estimator
        allowance = 2 * self._summary_tokens(target)  # the summary, and the quotes
        fixed = self._fixed_bytes()
        suffix = [0] * (len(history) + 1)
        for index in range(len(history) - 1, -1, -1):
            suffix[index] = suffix[index + 1] + message_bytes(history[index])
        for upto in starts:
            pinned = last_user if last_user is not None and last_user < upto else None
            size = fixed + suffix[upto]
            if pinned is not None:
                size += message_bytes(history[pinned])
            if estimator.tokens(size) + allowance <= target:
                return _Cut(upto, pinned)
        upto = starts[-1]
        return _Cut(upto, last_user if last_user is not None and last_user < upto else None)

    def _quotes(self, session: Session, cut: _Cut, budget_chars: int) -> str:
        quoted: list[str] = []
        left = budget_chars
        users = [
            (index, message)
            for index, message in enumerate(session.history[: cut.upto])
            if message.role is Role.USER and index != cut.pinned and message.text.strip()
        ]
        omitted = 0
        for index, message in reversed(users):
            text = _clip(message.text, QUOTE_LIMIT)
            if len(text) > left:
                omitted = len(users) - len(quoted)
                break
            left -= len(text)
            quoted.append(f"--- user message {index + 1} ---\n{text}")
        quoted.reverse()
        if omitted:
            note = f"({omitted} earlier user messages are not quoted; the summary covers them)"
            quoted.insert(0, note)
        return "\n\n".join(quoted)

    def _transcript(self, session: Session, cut: _Cut, limit_bytes: int) -> str:
        latest = session.compaction
        start = latest.upto if latest is not None else 0
        pieces: list[str] = []
        if latest is not None:
            pieces.append(f"<earlier summary>\n{latest.summary}\n</earlier summary>")
        pieces.extend(
            text
            for index in range(start, cut.upto)
            if index != cut.pinned and (text := _render(session.history[index]))
        )
        total = sum(len(piece.encode()) + 2 for piece in pieces)
        left_out = 0
        while total > limit_bytes and len(pieces) > 1:
            total -= len(pieces.pop(0).encode()) + 2
            left_out += 1
        text = "\n\n".join(pieces)
        if len(text.encode()) > limit_bytes:
            text = text.encode()[-limit_bytes:].decode(errors="ignore")
            left_out += 1
        if left_out:
            text = "(The oldest part of the transcript is left out.)\n\n" + text
        return text

    async def _summarise(
        self, transcript: str, max_tokens: int, sink: EventSink
    ) -> tuple[str, int] | str:
        """The summary and its output tokens, or why none could be written."""
        request = ModelRequest(
            system=SUMMARY_SYSTEM,
            messages=[
                Message.user(
                    f"{transcript}\n\nSummarise the session above as instructed, "
                    f"in at most {max_tokens * 3 // 4} words."
                )
            ],
            params=self.params.model_copy(
                update={"max_tokens": max_tokens, "thinking": ThinkingEffort.DEFAULT}
            ),
        )
        try:
            output = await self.provider.complete(request, _quiet(sink))
        except ProviderError as exc:
            return f"a summary could not be written: {exc}"
        text = output.message.text.strip()
        if not text:
            return "the model wrote an empty summary"
        return text, output.usage.output or self.budget.estimator.tokens(len(text.encode()))

    async def compact(
        self, session: Session, sink: EventSink, *, tokens: int, target: int | None = None
    ) -> Compaction | None:
        """Compact ``session`` so its next request fits ``target`` tokens
        (by default :meth:`ContextBudget.target` of ``tokens``, the size of
        the request that did not fit); ``None`` when there is nothing older
        than the current round to compact, or its summary would be no
        shorter than what it stands for.

        Appends the record to ``session.compactions``, has ``commit`` make
        it durable, then emits :class:`CompactionEvent` and
        :class:`ContextFill`.
        """
        goal = target if target is not None else self.budget.target(tokens)
        cut = self._plan(session, goal)
        if cut is None:
            return None
        estimator = self.budget.estimator
        summary_max = self._summary_tokens(goal)
        room = (self.budget.limit or tokens) - summary_max - estimator.tokens(len(SUMMARY_SYSTEM))
        transcript = self._transcript(
            session, cut, max(1024, int(room * estimator.bytes_per_token * 0.9))
        )
        written = await self._summarise(transcript, summary_max, sink)
        quotes = self._quotes(session, cut, int(summary_max * estimator.bytes_per_token))
        if isinstance(written, str):
            body = (
                f"{SUMMARY_HEADER} The first {cut.upto} messages of this conversation were "
                f"dropped to fit the model's context window ({written}); what follows is "
                "verbatim."
            )
            summary_tokens = 0
            dropped = True
        else:
            body = (
                f"{SUMMARY_HEADER} The first {cut.upto} messages of this conversation are "
                "summarised here to fit the model's context window; what follows is verbatim."
                f"\n\n## Summary\n\n{written[0]}"
            )
            summary_tokens = written[1]
            dropped = False
        if quotes:
            body += f"\n\n## The user's messages in that part, verbatim\n\n{quotes}"
        if cut.pinned is not None:
            body += "\n\nThe user's current request follows, verbatim."
        record = Compaction(
            upto=cut.upto,
            summary=body,
            pinned=cut.pinned,
            dropped=dropped,
            before=tokens,
            summary_tokens=summary_tokens,
        )
        session.compactions.append(record)
        after = self.estimate(session)
        if after >= tokens:  # the summary is no shorter than what it stands for
            session.compactions.pop()
            return None
        record = record.model_copy(update={"after": after})
        session.compactions[-1] = record
        if self.commit is not None:
            await self.commit(session)
        sink.emit(CompactionEvent(before=tokens, after=after, summary_tokens=summary_tokens))
        sink.emit(ContextFill(tokens=after, window=self.budget.window))
        return record
