"""Calls the resolver says are concurrent run at the same time, their
results recorded in the order the model made them; the others run alone;
a cancelled batch says every call of it was running."""

from __future__ import annotations

import anyio

from rhema_lsp.engine import Agent, ChatParams, Role, Session, ToolCall, ToolContext, ToolResult
from rhema_lsp.engine.events import ToolResultEvent
from rhema_lsp.engine.tools import Progress

from .scripted import Recorder, Reply, ScriptedProvider, ScriptedResolver, call


class Concurrent(ScriptedResolver):
    """Calls whose name starts with ``mcp_`` may run together."""

    def concurrent(self, call: ToolCall) -> bool:
        return call.name.startswith("mcp_")


def results(session: Session) -> list[tuple[str, str]]:
    return [
        (part.id, part.content)
        for message in session.history
        if message.role is Role.TOOL
        for part in message.tool_results
    ]


async def test_concurrent_calls_run_together_and_are_recorded_in_order() -> None:
    a_started, b_started = anyio.Event(), anyio.Event()
    order: list[str] = []

    async def first(c: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
        a_started.set()
        await b_started.wait()  # only returns if the second call runs meanwhile
        order.append("a")
        return ToolResult.success(c.id, "first")

    async def second(c: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
        b_started.set()
        await a_started.wait()
        order.append("b")
        return ToolResult.success(c.id, "second")

    async def alone(c: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
        assert order == ["a", "b"] or order == ["b", "a"]  # after the batch, not beside it
        return ToolResult.success(c.id, "alone")

    resolver = Concurrent({"mcp_a": first, "mcp_b": second, "edit": alone})
    provider = ScriptedProvider(
        Reply(calls=[call("1", "mcp_a"), call("2", "mcp_b"), call("3", "edit")]),
    )
    agent = Agent(provider, resolver=resolver, params=ChatParams(model="m"))
    session = Session()
    sink = Recorder()

    with anyio.fail_after(10):  # a deadlock, were they run one after the other
        await agent.step(session, sink, ToolContext())

    assert results(session) == [("1", "first"), ("2", "second"), ("3", "alone")]
    emitted = [e.id for e in sink.events if isinstance(e, ToolResultEvent)]
    assert emitted == ["1", "2", "3"]


async def test_a_cancelled_batch_says_each_of_its_calls_was_running() -> None:
    both_running = anyio.Event()
    running: list[str] = []

    async def hang(c: ToolCall, ctx: ToolContext, progress: Progress) -> ToolResult:
        running.append(c.id)
        if len(running) == 2:
            both_running.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    resolver = Concurrent({"mcp_a": hang, "mcp_b": hang, "edit": hang})
    provider = ScriptedProvider(
        Reply(calls=[call("1", "mcp_a"), call("2", "mcp_b"), call("3", "edit")]),
    )
    agent = Agent(provider, resolver=resolver, params=ChatParams(model="m"))
    session = Session()

    async with anyio.create_task_group() as group:

        async def stop_soon() -> None:
            await both_running.wait()
            group.cancel_scope.cancel()

        group.start_soon(stop_soon)
        await agent.step(session, Recorder(), ToolContext())

    texts = [content for _, content in results(session)]
    assert "cancelled by the user while it ran" in texts[0]
    assert "cancelled by the user while it ran" in texts[1]
    assert "was not run" in texts[2]
