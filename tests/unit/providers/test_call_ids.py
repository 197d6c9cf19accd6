"""Tool-call ids unique within a session on every wire, across steps and
across a restart (the session reopened from the store by a new agent and a
new adapter), and the pairs each wire is sent back matching."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rhema_lsp.engine import Agent, Message, Session, ToolCall, ToolContext, ToolResult, run_turn
from rhema_lsp.sessions import SessionStore
from tests.fakes.model_server import FakeModelServer, raw_reply, text_reply, tool_reply
from tests.unit.engine.scripted import ScriptedResolver, echo
from tests.unit.providers.helpers import Recorder, adapter


def ids_in(session: Session) -> tuple[list[str], list[str]]:
    parts = [part for message in session.history for part in message.content]
    return (
        [part.id for part in parts if isinstance(part, ToolCall)],
        [part.id for part in parts if isinstance(part, ToolResult)],
    )


def wire_pairs(wire: str, body: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """The call ids and the result ids a request body carries, in order."""
    if wire == "openai":
        messages = body["messages"]
        calls = [c["id"] for m in messages for c in m.get("tool_calls") or ()]
        results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    elif wire == "anthropic":
        blocks = [b for m in body["messages"] for b in m["content"]]
        calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    else:
        parts = [p for c in body["contents"] for p in c["parts"]]
        calls = [p["functionCall"].get("id") for p in parts if "functionCall" in p]
        results = [p["functionResponse"].get("id") for p in parts if "functionResponse" in p]
    return calls, results


async def a_turn(
    server: FakeModelServer, session: Session, prompt: str, store: SessionStore, session_id: str
) -> None:
    """One turn by a fresh adapter and agent, committed as the server commits."""
    provider = adapter(server)
    agent = Agent(
        provider,
        resolver=ScriptedResolver({"read_file": echo}),
        commit_hook=store.commit_hook(session_id),
    )
    await run_turn(agent, session, Message.user(prompt), Recorder(), ToolContext(), 5)
    await store.commit(session_id, session)
    await provider.aclose()


async def test_ids_stay_unique_across_steps_and_a_restart(
    any_wire: FakeModelServer, tmp_path: Path
) -> None:
    # Every answer numbers its calls from call_1 (Gemini sends no ids at all).
    any_wire.script(
        tool_reply(("read_file", {"path": "a.py"})),
        tool_reply(("read_file", {"path": "b.py"}), ("read_file", {"path": "c.py"})),
        text_reply("read three"),
        tool_reply(("read_file", {"path": "d.py"})),
        text_reply("read one more"),
    )
    store = await SessionStore.open(tmp_path)
    info = await store.create("read")
    await a_turn(any_wire, Session(), "read a, b and c", store, info.id)
    await store.close()

    # another process: the store reopened, the session loaded, new adapter and agent
    store = await SessionStore.open(tmp_path)
    try:
        session = await store.load(info.id)
        await a_turn(any_wire, session, "and d", store, info.id)
        stored = await store.load(info.id)
    finally:
        await store.close()

    calls, results = ids_in(stored)
    assert len(calls) == 4 and len(set(calls)) == 4, calls
    assert results == calls  # each result under its own call's id, in order
    # each tool saw its own call: the arguments echoed back in order
    contents = [
        json.loads(part.content)["path"]
        for message in stored.history
        for part in message.content
        if isinstance(part, ToolResult)
    ]
    assert contents == ["a.py", "b.py", "c.py", "d.py"]
    # the last request pairs every call with its result, once each
    sent_calls, sent_results = wire_pairs(any_wire.wire, any_wire.requests[-1])
    if any_wire.wire == "gemini":
        # Gemini gave no ids, so none is sent; its responses go by name
        assert sent_calls == sent_results == [None] * 4
    else:
        assert sent_calls == sent_results == calls


def _gemini_call_with_id(path: str) -> bytes:
    part = {"functionCall": {"id": "fc-1", "name": "read_file", "args": {"path": path}}}
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}]
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


async def test_gemini_ids_it_repeats_are_sent_back_unique_and_paired(
    gemini_server: FakeModelServer, tmp_path: Path
) -> None:
    gemini_server.script(
        raw_reply(_gemini_call_with_id("a.py")),
        raw_reply(_gemini_call_with_id("b.py")),
        text_reply("done"),
    )
    store = await SessionStore.open(tmp_path)
    try:
        info = await store.create("read")
        await a_turn(gemini_server, Session(), "read a and b", store, info.id)
        stored = await store.load(info.id)
    finally:
        await store.close()
    calls, results = ids_in(stored)
    assert calls[0] == "fc-1" and len(set(calls)) == 2 and results == calls
    sent_calls, sent_results = wire_pairs("gemini", gemini_server.requests[-1])
    assert sent_calls == sent_results == calls
