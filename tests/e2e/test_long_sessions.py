"""Long sessions never hit the context wall: the real server against a fake
model with a small window that answers "too long" past it, for 200 turns,
then a restart; and compaction on demand with ``rhema.compact``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import TOKEN_BYTES, FakeModelServer, Reply, text_reply, tool_reply

WINDOW = 10_000
SUMMARY_MARK = "[Compacted conversation]"


def model(body: Any) -> Reply:
    """The fake model's answers: summaries when asked, a read of hello.py on
    every third request, plain answers otherwise."""
    messages = body["messages"]
    if messages[0]["role"] == "system" and messages[0]["content"].startswith("You summarise"):
        return text_reply("The user sent numbered requests; each was answered, hello.py was read.")
    last = messages[-1]
    if last["role"] == "tool":
        return text_reply("hello.py greets by name. " + "r" * 200)
    number = int(re.search(r"request (\d+)", last["content"]).group(1))  # type: ignore[union-attr]
    if number % 3 == 0:
        return tool_reply(("read_file", {"path": "hello.py"}))
    return text_reply(f"Answer to request {number}. " + "a" * 400)


def calls_have_results(messages: list[dict[str, Any]]) -> bool:
    """Every call has its result right after it, and every result its call."""
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            if message["tool_call_id"] not in open_calls:
                return False
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            return False
        if message["role"] == "assistant":
            open_calls = {call["id"] for call in message.get("tool_calls") or []}
    return not open_calls or messages[-1]["role"] == "assistant"


def is_summary_request(body: Any) -> bool:
    return str(body["messages"][0]["content"]).startswith("You summarise")


async def test_two_hundred_turns_against_a_window_never_fail_and_resume_compacted(
    workspace: Path, tmp_path: Path
) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""}
    with FakeModelServer(wire="openai", context_window=WINDOW, responder=model) as fake:
        settings = settings_for(fake, mode="ask")
        client = await start_editor("visual_studio_code", [workspace], settings, env=env)
        session = None
        try:
            for number in range(200):
                args: dict[str, Any] = {"prompt": f"request {number}: " + "p" * 300}
                if session is not None:
                    args["session"] = session
                result = await client.command("rhema.turn", args)
                assert result["stopReason"] == "end_turn", (number, client.events_of("error"))
                session = result["session"]
            compactions = client.events_of("compaction")
            fills = client.events_of("context")
        finally:
            await client.shutdown_session()

        assert len(compactions) >= 5
        assert all(c["after"] < c["before"] for c in compactions)
        assert fake.too_long >= 1  # the window was learnt from the model's own refusal
        turns = [body for body in fake.requests if not is_summary_request(body)]
        summaries = [body for body in fake.requests if is_summary_request(body)]
        assert len(summaries) == len(compactions)
        assert all("tools" not in body for body in summaries)
        assert all(calls_have_results(body["messages"]) for body in turns)
        sizes = [len(post.raw) / TOKEN_BYTES for post in fake.posts]
        assert sum(size > WINDOW for size in sizes) == fake.too_long
        assert fills[-1]["window"] is not None and fills[-1]["window"] <= WINDOW

        # A new server: the session opens, and goes on, in its compacted view.
        client = await start_editor("visual_studio_code", [workspace], settings, env=env)
        try:
            opened = await client.command("rhema.openSession", {"session": session})
            assert opened["compaction"]["upto"] > 0
            first = opened["messages"][0]["content"][0]["text"]
            assert first.startswith(SUMMARY_MARK)
            full = await client.command("rhema.openSession", {"session": session, "full": True})
            user_texts = [m["content"][0]["text"] for m in full["messages"] if m["role"] == "user"]
            assert len(user_texts) == 200  # nothing of the history was lost
            assert len(opened["messages"]) < len(full["messages"])
            before = len(fake.requests)
            result = await client.command(
                "rhema.turn", {"prompt": "request 1000: still there?", "session": session}
            )
            assert result["stopReason"] == "end_turn"
            resumed = fake.requests[before]
            assert resumed["messages"][1]["content"].startswith(SUMMARY_MARK)
            assert resumed["messages"][-1]["content"] == "request 1000: still there?"
            assert len(fake.posts[before].raw) / TOKEN_BYTES <= WINDOW
        finally:
            await client.shutdown_session()


async def test_compact_on_demand_summarises_and_the_next_turn_sends_the_summary(
    client: EditorClient, fake: FakeModelServer
) -> None:
    fake.script(*(text_reply(f"answer {n}: " + "a" * 2000) for n in range(3)))
    session = None
    for number in range(3):
        args: dict[str, Any] = {"prompt": f"question {number}"}
        if session is not None:
            args["session"] = session
        session = (await client.command("rhema.turn", args))["session"]

    fake.script(text_reply("They asked three questions."), text_reply("answer 3"))
    result = await client.command("rhema.compact", {"session": session})
    assert result["compacted"] is True
    assert result["after"] < result["before"]
    assert result["summaryTokens"] > 0
    event = await client.wait_for_event("compaction")
    assert event["after"] == result["after"]
    assert "tools" not in fake.requests[3]

    await client.command("rhema.turn", {"prompt": "question 3", "session": session})
    sent = fake.requests[4]["messages"]
    assert sent[1]["content"].startswith(SUMMARY_MARK)
    assert "They asked three questions." in sent[1]["content"]
    assert "--- user message 1 ---\nquestion 0" in sent[1]["content"]
    assert sent[-1]["content"] == "question 3"


async def test_compact_with_nothing_older_says_so(
    client: EditorClient, fake: FakeModelServer
) -> None:
    fake.script(text_reply("only answer"))
    session = (await client.command("rhema.turn", {"prompt": "only question"}))["session"]
    result = await client.command("rhema.compact", {"session": session})
    assert result["compacted"] is False
    assert result["after"] == result["before"]
    assert len(fake.requests) == 1  # no summary was asked for
    assert client.events_of("compaction") == []
