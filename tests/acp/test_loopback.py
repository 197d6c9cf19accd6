"""``rhema-lsp acp`` driven by the ACP SDK's own client side, end to end:
a child process, real JSON-RPC over its stdio, the fake model server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from rhema_lsp.sessions import SessionStore
from rhema_lsp.tools import TOOLS_BY_MODE
from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

HELLO_UNSAVED = 'def greet(name):\n    return "hello, " + name  # unsaved\n'


async def test_initialize_declares_sessions_and_embedded_context(
    fake: FakeModelServer, state: Path
) -> None:
    async with start_agent(RecordingClient(), fake, state) as (_conn, init):
        assert init.protocol_version == PROTOCOL_VERSION
        capabilities = init.agent_capabilities
        assert capabilities is not None
        assert capabilities.load_session is True
        assert capabilities.prompt_capabilities is not None
        assert capabilities.prompt_capabilities.embedded_context is True
        assert capabilities.session_capabilities is not None
        assert capabilities.session_capabilities.list is not None
        assert init.agent_info is not None and init.agent_info.name == "rhema-lsp"


async def test_a_prompt_streams_thoughts_and_the_answer(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(text_reply("It greets by name.", thinking="Reading the code.", chunk=3))
    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        assert session.modes is not None and session.modes.current_mode_id == "edit"
        assert [m.id for m in session.modes.available_modes] == ["ask", "plan", "edit", "agent"]

        response = await conn.prompt(
            session_id=session.session_id, prompt=[text_block("What does greet do?")]
        )

        assert response.stop_reason == "end_turn"
        assert client.thought_text() == "Reading the code."
        assert client.message_text() == "It greets by name."
        kinds = [type(update) for _, update in client.updates]
        assert kinds.index(AgentThoughtChunk) < kinds.index(AgentMessageChunk)
        assert {sid for sid, _ in client.updates} == {session.session_id}
        assert fake.requests[0]["messages"][-1]["content"] == "What does greet do?"
        listed = await conn.list_sessions(cwd=str(workspace))
        assert [(s.session_id, s.title) for s in listed.sessions] == [
            (session.session_id, "What does greet do?")
        ]


async def test_an_edit_goes_through_the_clients_buffer_with_a_diff(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    hello = workspace / "hello.py"
    fake.script(
        tool_reply(("edit_file", {"path": "hello.py", "old_text": "unsaved", "new_text": "kept"})),
        text_reply("Edited."),
    )
    client = RecordingClient(buffers={str(hello): HELLO_UNSAVED})
    async with start_agent(client, fake, state) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(
            session_id=session.session_id, prompt=[text_block("rename the comment")]
        )

    assert response.stop_reason == "end_turn"
    assert str(hello) in client.reads
    new_text = HELLO_UNSAVED.replace("unsaved", "kept")
    assert client.writes == [(str(hello), new_text)]
    assert hello.read_text() == 'def greet(name):\n    return "hello " + name\n'  # disk untouched
    updates = client.tool_updates("call_1")
    assert isinstance(updates[0], ToolCallStart)
    assert (updates[0].kind, updates[0].status) == ("edit", "pending")
    named, started, done = updates[1], updates[2], updates[-1]
    assert isinstance(named, ToolCallProgress) and named.status is None  # still pending
    assert named.title == "Edit hello.py"
    assert [loc.path for loc in named.locations or []] == [str(hello)]
    assert isinstance(started, ToolCallProgress) and started.status == "in_progress"
    assert [u.status for u in updates].count("in_progress") == 1
    assert isinstance(done, ToolCallProgress) and done.status == "completed"
    diffs = [c for c in done.content or [] if isinstance(c, FileEditToolCallContent)]
    assert [(d.path, d.old_text, d.new_text) for d in diffs] == [
        (str(hello), HELLO_UNSAVED, new_text)
    ]
    assert [(loc.path, loc.line) for loc in done.locations or []] == [(str(hello), 1)]
    assert "edited hello.py" in fake.requests[1]["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("answers", "asked", "ran"),
    [
        (["allow_once", "allow_once"], 2, 2),
        (["reject_once", "reject_once"], 2, 0),
        ([None, None], 2, 0),  # dismissed
        (["allow_always"], 1, 2),  # the second run is not asked again
    ],
)
async def test_run_command_asks_permission(
    fake: FakeModelServer,
    state: Path,
    workspace: Path,
    answers: list[str | None],
    asked: int,
    ran: int,
) -> None:
    command = ("run_command", {"command": "echo rhema-ran"})
    fake.script(tool_reply(command, command), text_reply("ok"))
    client = RecordingClient(answers=answers)
    flags = ("--mode", "agent", "--sandbox", "off")  # every command asked about
    async with start_agent(client, fake, state, *flags) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(
            session_id=session.session_id, prompt=[text_block("run it twice")]
        )

    assert response.stop_reason == "end_turn"
    assert len(client.asked) == asked
    request = client.asked[0]
    assert request.tool_call.tool_call_id == "call_1"
    assert request.tool_call.kind == "execute"
    # Waiting for the answer, the call is pending; it runs only once allowed.
    assert request.tool_call.status == "pending"
    assert request.updates_before[-1].title == "Run `echo rhema-ran`"
    assert all(u.status != "in_progress" for u in request.updates_before)
    statuses_1 = [u.status for u in client.tool_updates("call_1")]
    assert statuses_1.count("in_progress") == (1 if ran else 0)
    assert [o.kind for o in request.options] == ["allow_once", "allow_always", "reject_once"]
    results = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert sum("[exit code 0]" in m["content"] for m in results) == ran
    statuses = [client.tool_updates(f"call_{i}")[-1].status for i in (1, 2)]
    assert statuses == ["completed"] * ran + ["failed"] * (2 - ran)
    if ran:
        output = client.tool_updates("call_1")[-1].content or []
        assert any(
            isinstance(c, ContentToolCallContent) and "rhema-ran" in getattr(c.content, "text", "")
            for c in output
        )


async def test_cancel_mid_stream_ends_the_prompt_cancelled(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(text_reply("word " * 2000, chunk=5, delay=0.005))
    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        pending = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[text_block("talk")])
        )
        await client.wait_for(lambda: bool(client.of(AgentMessageChunk)))

        await conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(pending, 10)

        assert response.stop_reason == "cancelled"
        assert await asyncio.to_thread(fake.client_closed.wait, 5)
        assert 0 < len(client.message_text()) < len("word " * 2000)
        # the session is free again: the next prompt runs
        fake.script(text_reply("again"))
        again = await conn.prompt(session_id=session.session_id, prompt=[text_block("more")])
        assert again.stop_reason == "end_turn"


async def test_a_mode_switch_changes_the_tools_offered(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(text_reply("a"), text_reply("b"))
    async with start_agent(RecordingClient(), fake, state) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("one")])
        await conn.set_session_mode(session_id=session.session_id, mode_id="ask")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("two")])

    def tools(request: dict[str, object]) -> set[str]:
        return {t["function"]["name"] for t in request["tools"]}  # type: ignore[attr-defined]

    assert "edit_file" in tools(fake.requests[0])
    assert tools(fake.requests[1]) == {*TOOLS_BY_MODE["ask"], "task", "update_plan"}
    assert "edit_file" not in tools(fake.requests[1])


async def test_load_replays_the_stored_history(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(
        tool_reply(("read_file", {"path": "hello.py"}), thinking="Look first."),
        text_reply("It greets."),
    )
    async with start_agent(RecordingClient(), fake, state) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("explain hello.py")])

    later = RecordingClient()
    async with start_agent(later, fake, state) as (conn, _init):
        loaded = await conn.load_session(cwd=str(workspace), session_id=session.session_id)
        assert loaded is not None and loaded.modes is not None

    kinds = [type(update).__name__ for _, update in later.updates]
    assert kinds == [
        "UserMessageChunk",
        "AgentThoughtChunk",
        "ToolCallStart",
        "AgentMessageChunk",
        "AvailableCommandsUpdate",  # the session's commands, after the history
    ]
    user = later.of(UserMessageChunk)[0]
    assert user.content.text == "explain hello.py"
    call = later.of(ToolCallStart)[0]
    assert (call.tool_call_id, call.kind, call.status) == ("call_1", "read", "completed")
    assert call.title == "Read hello.py"
    assert later.message_text() == "It greets."
    # the same store the LSP server opens: the session continues there
    store = await SessionStore.open(workspace)
    try:
        assert len((await store.load(session.session_id)).history) == 4
        assert (await store.info(session.session_id)).turns == 1
    finally:
        await store.close()


async def test_load_replays_each_tool_call_with_its_own_result(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    # Every answer of the fake numbers its calls from call_1, as an id-less
    # OpenAI-compatible server does: the two turns' calls get distinct ids.
    fake.script(
        tool_reply(("read_file", {"path": "hello.py"})),
        text_reply("It greets."),
        tool_reply(("edit_file", {"path": "hello.py", "old_text": "hello ", "new_text": "hi "})),
        text_reply("Edited."),
    )
    async with start_agent(RecordingClient(), fake, state) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        for text in ("explain hello.py", "say hi instead"):
            await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
    # what the model was sent: each result under its own call's id
    last = fake.requests[-1]["messages"]
    sent = [c["id"] for m in last for c in m.get("tool_calls") or ()]
    assert sent == [m["tool_call_id"] for m in last if m["role"] == "tool"]
    assert len(set(sent)) == 2

    later = RecordingClient()
    async with start_agent(later, fake, state) as (conn, _init):
        await conn.load_session(cwd=str(workspace), session_id=session.session_id)

    read, edit = later.of(ToolCallStart)
    assert read.tool_call_id != edit.tool_call_id
    assert (read.title, read.status) == ("Read hello.py", "completed")
    assert (edit.title, edit.status) == ("Edit hello.py", "completed")

    def shown(update: ToolCallStart) -> str:
        blocks = [c for c in update.content or [] if isinstance(c, ContentToolCallContent)]
        return "".join(getattr(c.content, "text", "") for c in blocks)

    assert "def greet(name):" in shown(read) and "edited hello.py" not in shown(read)
    assert "edited hello.py" in shown(edit)


async def test_an_unknown_session_is_a_clear_error(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    from acp import RequestError

    async with start_agent(RecordingClient(), fake, state) as (conn, _init):
        with pytest.raises(RequestError, match="no session nope"):
            await conn.load_session(cwd=str(workspace), session_id="nope")


async def test_cancel_while_permission_is_pending_ends_the_prompt_cancelled(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(tool_reply(("run_command", {"command": "echo never", "escalate": True})))
    client = RecordingClient(hold_permission=True)
    wire: list[dict[str, object]] = []
    async with start_agent(client, fake, state, "--mode", "agent", wire=wire) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        pending = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[text_block("run it")])
        )
        await client.wait_for(lambda: bool(client.asked))

        await conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(pending, 10)

    assert response.stop_reason == "cancelled"
    assert len(fake.requests) == 1  # no model call after the cancel
    # The abandoned permission request is withdrawn, before the prompt's answer.
    (asked,) = [m for m in wire if m.get("method") == "session/request_permission"]
    withdrawn = [m for m in wire if m.get("method") == "$/cancel_request"]
    assert [m["params"] for m in withdrawn] == [{"requestId": asked["id"]}]
    answered = next(i for i, m in enumerate(wire) if "result" in m and "stopReason" in str(m))
    assert wire.index(withdrawn[0]) < answered
    assert client.tool_updates("call_1")[-1].status == "failed"
    store = await SessionStore.open(workspace)
    try:
        history = (await store.load(session.session_id)).history
    finally:
        await store.close()
    assert "cancelled by the user" in history[-1].tool_results[0].content
