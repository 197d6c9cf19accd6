"""The LSP door in process (see :mod:`tests.unit.server.loopback`): what the
server adds to the pipeline. A turn's events go out as ``rhema/event`` in
sequence, ending with ``turn_end``, inside a work-done progress; each
cancellation path reaches the run, which keeps its partial answer; a client
that renders no events gets a detached run, no ``rhema/event``, progress on
a token the server creates (where it shows progress) and its transcript,
shown at turn end; ``shutdown``
stops a running turn checkpointed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rhema_lsp.runs.driver import INTERRUPTED
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.server.loopback import LONG, Loopback, kept_logging, settings, start, stop


async def test_a_turns_events_go_out_in_sequence_inside_a_progress(
    client: Loopback, fake: FakeModelServer
) -> None:
    fake.script(text_reply("Hello there."))

    result = await client.command("rhema.turn", {"prompt": "hi"})

    assert (result["stopReason"], result["text"], result["turn"]) == ("end_turn", "Hello there.", 1)
    events = client.events()
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {(e["session"], e["turn"]) for e in events} == {(result["session"], 1)}
    assert events[-1]["event"]["type"] == "turn_end"
    kinds = [p["value"]["kind"] for p in client.of("$/progress")]
    assert kinds[0] == "begin" and kinds[-1] == "end"

    fake.script(text_reply("Again."))
    again = await client.command("rhema.turn", {"prompt": "more", "session": result["session"]})
    later = client.events()[len(events) :]
    assert again["turn"] == 2
    assert later[0]["seq"] == events[-1]["seq"] + 1  # the session's sequence goes on


@pytest.mark.parametrize("path", ["cancelRequest", "progressCancel", "rhema.cancel"])
async def test_each_cancellation_reaches_the_run_which_keeps_its_partial_answer(
    client: Loopback, fake: FakeModelServer, path: str
) -> None:
    fake.script(text_reply(LONG, chunk=5, delay=0.002))
    pending = asyncio.ensure_future(client.command("rhema.turn", {"prompt": "talk"}, "turn-1"))
    await client.wait_for(lambda: any(e["event"]["type"] == "text_delta" for e in client.events()))

    if path == "cancelRequest":
        client.notify("$/cancelRequest", {"id": "turn-1"})
    elif path == "progressCancel":
        token = client.of("$/progress")[0]["token"]
        client.notify("window/workDoneProgress/cancel", {"token": token})
    else:
        assert (await client.command("rhema.cancel", {}))["cancelled"]
    result = await asyncio.wait_for(pending, 10)

    assert result["stopReason"] == "cancelled"
    assert result["usage"]["input"] > 0
    opened = await client.command("rhema.openSession", {"session": result["session"]})
    messages = opened["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    kept = messages[-1]["content"][0]["text"]
    assert kept == f"{result['text']}\n\n{INTERRUPTED}"


@pytest.mark.parametrize("progress", [False, True], ids=["no-progress", "progress"])
async def test_a_client_without_events_gets_a_detached_run_and_a_transcript(
    folder: Path, fake: FakeModelServer, progress: bool
) -> None:
    fake.script(text_reply("It prints hello.\n\nThat is all."))
    with kept_logging():
        client = await start(folder, settings(fake), events=False, progress=progress)
        try:
            started = await client.command("rhema.turn", {"prompt": "what does it do?"})
            assert started == {"session": started["session"], "turn": 1, "started": True}
            await client.wait_for(lambda: bool(client.of("window/showMessage")))
        finally:
            await stop(client)

    message = client.of("window/showMessage")[-1]["message"]
    transcript = folder / ".rhema" / "transcripts" / f"{started['session']}.md"
    assert message == f"Rhema: It prints hello. That is all. (end turn). Transcript: {transcript}"
    assert "It prints hello." in transcript.read_text()
    assert client.events() == []
    created = ["window/workDoneProgress/create"] if progress else []
    assert [method for method, _ in client.asked] == [*created, "window/showDocument"]
    kinds = [p["value"]["kind"] for p in client.of("$/progress")]
    assert kinds == (["begin", *kinds[1:-1], "end"] if progress else [])


async def test_shutdown_stops_a_running_turn_and_checkpoints_it(
    folder: Path, fake: FakeModelServer
) -> None:
    from rhema_lsp.sessions import SessionStore

    fake.script(text_reply(LONG, chunk=5, delay=0.002))
    with kept_logging():
        client = await start(folder, settings(fake))
        pending = asyncio.ensure_future(client.command("rhema.turn", {"prompt": "talk"}))
        await client.wait_for(
            lambda: any(e["event"]["type"] == "text_delta" for e in client.events())
        )
        await stop(client)
        result = await asyncio.wait_for(pending, 10)

    assert result["stopReason"] == "cancelled"
    store = await SessionStore.open(folder)
    try:
        info = await store.info(result["session"])
        history = (await store.load(result["session"])).history
    finally:
        await store.close()
    assert not info.running
    assert history[-1].text.endswith(INTERRUPTED)


@pytest.mark.parametrize("answer", ["never", "after-the-end", "refused"])
async def test_a_turn_runs_and_ends_whatever_becomes_of_its_progress_token(
    folder: Path, fake: FakeModelServer, answer: str
) -> None:
    """Issue 42: the client never answers ``window/workDoneProgress/create``
    (lsp-mode drops it now and then), answers it only once the turn is over,
    or refuses it: the turn runs and ends all the same, its answer reaches the
    client, and no progress is sent on a token the client did not create."""
    create = "window/workDoneProgress/create"
    fake.script(text_reply("It prints hello."))
    with kept_logging():
        client = await start(folder, settings(fake), events=False)
        if answer == "refused":
            client.refused.add(create)
        else:
            client.held[create] = []
        try:
            started = await client.command("rhema.turn", {"prompt": "what does it do?"})
            await client.wait_for(lambda: bool(client.of("window/showMessage")))
            held = list(client.held.get(create, []))
            if answer == "after-the-end":
                [request] = client.held.pop(create)
                client.answer(request)
            status = await client.command("rhema.status", {})  # the server is still serving
        finally:
            await stop(client)

    assert started["started"] and status is not None
    transcript = folder / ".rhema" / "transcripts" / f"{started['session']}.md"
    [message] = client.of("window/showMessage")
    assert message["message"] == f"Rhema: It prints hello. (end turn). Transcript: {transcript}"
    assert "It prints hello." in transcript.read_text()
    assert [method for method, _ in client.asked] == [create, "window/showDocument"]
    assert client.of("$/progress") == []
    # A creation still unanswered when the turn ended is withdrawn (no
    # request waits for good); one the client refused is not.
    withdrawn = [] if answer == "refused" else [{"id": request["id"]} for request in held]
    assert client.of("$/cancelRequest") == withdrawn
