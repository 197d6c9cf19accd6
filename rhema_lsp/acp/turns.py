"""One ACP prompt as a turn of the run pipeline.

The pipeline (:meth:`~rhema_lsp.runs.turn.Turns.run`) does the turn: lease,
resume, the prompt committed with its turn's start, the session's context
budget, MCP tools, checkpoints in the store, commits, cancellation, the
recorded turn; the door kit (:class:`~rhema_lsp.runs.door.Door`) registered
the run and decided its turn before. What ACP adds is here: the output (:class:`AcpOutput`, the
prompt's ``session/update`` stream and the task that pumps it, drained before
the prompt answers), the tools' ACP side (:class:`~rhema_lsp.acp.tools.AcpTools`:
locations, the client's buffers, diffs), and the answer: our stop reason as
ACP's with the turn's usage, or :class:`~rhema_lsp.acp.errors.TurnFailed`
(a JSON-RPC error at the agent's boundary) when the turn failed.
"""

from __future__ import annotations

import asyncio
import dataclasses

import anyio.to_thread
from acp.schema import (
    AgentMessageChunk,
    PromptResponse,
    SessionInfoUpdate,
    StopReason,
    TextContentBlock,
    Usage,
)

from rhema_lsp.acp.costs import CostMeter, user_prices
from rhema_lsp.acp.errors import TurnFailed
from rhema_lsp.acp.options import keep_choices
from rhema_lsp.acp.sessions import AcpSession
from rhema_lsp.acp.terminals import TerminalShell
from rhema_lsp.acp.tools import AcpTools
from rhema_lsp.acp.updates import UpdateSender, UpdateStream
from rhema_lsp.acp.worktrees import place_of
from rhema_lsp.contract import RunStopReason
from rhema_lsp.engine import EventSink, ProviderError, ToolResolver, support_of
from rhema_lsp.providers.prices import price_of
from rhema_lsp.runs.driver import Outcome
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.runs.registry import Run
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.turn import TurnReport, Turns
from rhema_lsp.runs.workplace import Backend, BackendSource, Plan
from rhema_lsp.sessions import title_from_prompt
from rhema_lsp.tools import WorkspaceTools

__all__ = ["AcpOutput", "answer", "run_prompt"]

_STOP_REASONS: dict[RunStopReason, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "end_turn",
    "pause_turn": "end_turn",
    "max_tokens": "max_tokens",
    "max_steps": "max_turn_requests",
    "cancelled": "cancelled",
}
"""Our stop reasons as ACP's; ``error`` is a JSON-RPC error instead."""


class AcpOutput:
    """A prompt's updates: the stream, and the task sending it to the client."""

    def __init__(
        self, client: UpdateSender, session_id: str, meter: CostMeter | None = None
    ) -> None:
        self.stream = UpdateStream(client, session_id, meter)
        self._pump: asyncio.Task[None] | None = None

    async def open(self, ref: TurnRef) -> EventSink:
        """Start sending updates."""
        self._pump = asyncio.get_running_loop().create_task(
            self.stream.pump(), name=f"rhema acp updates {ref}"
        )
        return self.stream

    async def close(self, outcome: Outcome) -> None:
        """Return once every update is sent."""
        self.stream.close()
        if self._pump is not None:
            await self._pump


async def run_prompt(
    turns: Turns,
    session: AcpSession,
    run: Run,
    plan: Plan,
    backend: BackendSource,
    settings: Settings,
    client: UpdateSender,
    *,
    offered_images: bool = False,
) -> Outcome:
    """Run ``plan`` as ``run``, the turn the door kit registered and decided
    on ``session`` (stored by then: a new session's choices made before are
    kept with it now).

    Raises
    ------
    SessionStoreError
        The session cannot be stored or read (``SessionBusyError``: another
        window runs it).
    """
    first = not session.stored
    session.stored = True
    if first:  # the choices made before the session was stored
        await keep_choices(session)
    output = AcpOutput(client, session.id, session.cost)
    prices = await anyio.to_thread.run_sync(user_prices)

    async def priced() -> Backend:  # the answering model's price, for the session's cost
        provider = await backend()
        session.cost.price = price_of(provider.model, prices)
        return provider

    if first:  # its first prompt titled it: session lists can show it
        output.stream.send(
            SessionInfoUpdate(
                session_update="session_info_update", title=title_from_prompt(plan.title)
            )
        )

    def decorate(workspace: WorkspaceTools, resolver: ToolResolver) -> ToolResolver:
        if session.terminals is not None and not session.worktree:  # in the client's terminals
            workspace.shell = TerminalShell(
                session.terminals, session.id, session.editor, output.stream
            )
        return AcpTools(workspace, session.editor, output.stream, resolver)

    if offered_images:  # said at initialize; the session's model may read none now
        plan = await _images_kept(plan, priced, output.stream)
    async with place_of(session, first, plan.title) as place:
        report: TurnReport[None] = await turns.run(
            run, plan, place, priced, settings, output, decorate=decorate
        )
    return report.outcome


async def _images_kept(plan: Plan, backend: BackendSource, stream: UpdateStream) -> Plan:
    """``plan``, its images left out with a note the user sees when the
    session's model reads none (the agent said at ``initialize`` that it
    takes images; the model was changed since). A client that was told no
    images and sent some anyway is refused by the turn, as ever."""
    if not plan.images:
        return plan
    try:
        support = support_of((await backend()).provider)
    except ProviderError:
        return plan  # the turn says why, as ever
    if support.max_bytes > 0:
        return plan
    count = len(plan.images)
    what = "The image was" if count == 1 else f"The {count} images were"
    note = f"({what} left out: {support.why}.)\n\n"
    stream.send(
        AgentMessageChunk(
            session_update="agent_message_chunk", content=TextContentBlock(type="text", text=note)
        )
    )
    return dataclasses.replace(plan, images=())


def answer(outcome: Outcome) -> PromptResponse:
    """The prompt's answer: how the turn stopped, and what it used.

    Raises
    ------
    TurnFailed
        The turn failed; the message says why.
    """
    if outcome.stop_reason == "error":
        raise TurnFailed(outcome.error or "the turn failed")
    usage = outcome.usage
    return PromptResponse(
        stop_reason=_STOP_REASONS[outcome.stop_reason],
        usage=Usage(
            input_tokens=usage.input,
            output_tokens=usage.output,
            total_tokens=usage.input + usage.output,
        ),
    )
