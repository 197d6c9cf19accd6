"""kill -9 of a real ``rhema-lsp serve`` at every point the commit protocol
names (:mod:`rhema_lsp.runs.points`), then the store reopened in a new
window: nothing lost, nothing repeated, the next turn gets a new number, and
every change the editor applied is rewindable, the file restored exactly.

The process kills itself where ``RHEMA_KILL_AT`` says (``point@n``: the
*n*-th time it passes the point), so each kill lands exactly on its point
with no sleeps. Turn 1 edits ``a.py`` and ends; turn 2, shaped the same
(``b.py``), is killed at the first time it passes the point. The killed
window's buffers are saved to disk (the editor outlives the server), then a
second window opens the session, runs turn 3 and rewinds.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.runs.points import (
    CHANGE_APPLIED,
    CHANGE_PREPARED,
    COMPACTION_COMMITTED,
    INTENT_COMMITTED,
    KILL_AT,
    POINTS,
    PROMPT_COMMITTED,
    STEP_COMMITTED,
    TURN_RECORDED,
)
from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

A = "def a():\n    return 1\n"
B = "def b():\n    return 2\n"
TURN_POINTS = [point for point in POINTS if point != COMPACTION_COMMITTED]
# How often a turn shaped like turn 1 (one edit, then an answer) passes each point.
PER_TURN = {point: 1 for point in TURN_POINTS} | {STEP_COMMITTED: 2}
# From this point on, turn 2's prompt (and its answer with the tool call) is stored.
STORED_FROM = TURN_POINTS.index(PROMPT_COMMITTED)
INTENT_FROM = TURN_POINTS.index(INTENT_COMMITTED)
CHANGED_FROM = TURN_POINTS.index(CHANGE_PREPARED)
EDITOR = "visual_studio_code"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def edit_turn(fake: FakeModelServer, name: str, old: str, new: str, answer: str) -> None:
    fake.script(
        tool_reply(("edit_file", {"path": name, "old_text": old, "new_text": new})),
        text_reply(answer),
    )


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": "", **extra}


async def killed_during(client: EditorClient, name: str, args: dict[str, Any]) -> None:
    """Send a command; the server SIGKILLs itself before it answers. The
    window saves its buffers (what the editor applied) and closes."""
    server = client._server
    assert server is not None
    pending = asyncio.ensure_future(client.command(name, args))
    async with asyncio.timeout(60):
        code = await server.wait()
    pending.cancel()
    assert code == -signal.SIGKILL, f"the server exited {code}, not killed"
    for uri in client.state.buffers:
        client.save(uri)
    await client.stop()


def user_texts(opened: dict[str, Any]) -> list[str]:
    return [
        part["text"]
        for message in opened["messages"]
        if message["role"] == "user"
        for part in message["content"]
        if part.get("type") == "text"
    ]


async def restore(client: EditorClient, session: str, turn: int) -> dict[str, Any]:
    """Rewind the code to before ``turn`` and save what the rewind asks to."""
    done = await client.command("rhema.rewind", {"session": session, "turn": turn, "what": "code"})
    assert done["conflicts"] == []
    for uri in done["save"]:
        client.save(uri)
    return dict(done)


@pytest.mark.parametrize("point", TURN_POINTS)
async def test_a_kill_at_each_point_of_a_turn_loses_nothing_and_repeats_nothing(
    workspace: Path, tmp_path: Path, point: str
) -> None:
    (workspace / "a.py").write_text(A)
    (workspace / "b.py").write_text(B)
    index = TURN_POINTS.index(point)
    with FakeModelServer() as fake:
        first = await start_editor(
            EDITOR,
            [workspace],
            settings_for(fake, mode="edit"),
            env=env_for(tmp_path, **{KILL_AT: f"{point}@{PER_TURN[point] + 1}"}),
        )
        edit_turn(fake, "a.py", "return 1", "return 10", "done 1")
        one = await first.command("rhema.turn", {"prompt": "first"})
        assert (one["turn"], one["stopReason"]) == (1, "end_turn")
        session = one["session"]
        edit_turn(fake, "b.py", "return 2", "return 20", "done 2")
        await killed_during(first, "rhema.turn", {"prompt": "second", "session": session})
    b_applied = (workspace / "b.py").read_text() != B
    assert b_applied == (index >= TURN_POINTS.index(CHANGE_APPLIED))

    with FakeModelServer() as fake:
        second = await start_editor(
            EDITOR, [workspace], settings_for(fake, mode="edit"), env=env_for(tmp_path)
        )
        try:
            opened = await second.command("rhema.openSession", {"session": session})
            prompts = ["first", "second"] if index >= STORED_FROM else ["first"]
            assert user_texts(opened) == prompts  # nothing lost, nothing repeated
            if index >= INTENT_FROM:
                # The edit's call was started: resumed as interrupted, never run again.
                resumed = opened["resumed"]
                assert resumed["rerun"] == []
                assert len(resumed["interrupted"]) == (index < TURN_POINTS.index(STEP_COMMITTED))

            listed = {
                t["turn"]: t
                for t in (await second.command("rhema.changes", {"session": session}))["turns"]
            }
            if index >= STORED_FROM:
                crashed = listed[2]
                assert crashed["title"] == "second"
                assert crashed["interrupted"] == (point != TURN_RECORDED)
                files = [Path(f["uri"]).name for f in crashed["files"]]
                assert files == (["b.py"] if index >= CHANGED_FROM else [])
            else:
                assert 2 not in listed
            assert not listed[1]["interrupted"]

            fake.script(text_reply("done 3"))
            three = await second.command("rhema.turn", {"prompt": "third", "session": session})
            assert (three["turn"], three["stopReason"]) == (3, "end_turn")  # a new number
            listed = {
                t["turn"]: t
                for t in (await second.command("rhema.changes", {"session": session}))["turns"]
            }
            assert listed[3]["title"] == "third" and listed[3]["files"] == []
            assert listed[1]["title"] == "first"
            if index >= STORED_FROM:
                assert listed[2]["title"] == "second"  # its own record, not overwritten

            # Every applied change rewinds, each file restored exactly.
            await restore(second, session, 2)
            assert digest((workspace / "b.py").read_text()) == digest(B)
            assert (workspace / "a.py").read_text() == "def a():\n    return 10\n"
            await restore(second, session, 1)
            assert digest((workspace / "a.py").read_text()) == digest(A)
            assert digest((workspace / "b.py").read_text()) == digest(B)

            # The conversation rewound to before turn 1 keeps no prompt at all.
            done = await second.command(
                "rhema.rewind", {"session": session, "turn": 1, "what": "conversation"}
            )
            assert done["messages"] == 0
            opened = await second.command("rhema.openSession", {"session": session})
            assert opened["messages"] == []
        finally:
            await second.shutdown_session()


async def test_a_session_killed_as_its_first_prompt_is_stored_is_never_left_empty(
    workspace: Path, tmp_path: Path
) -> None:
    with FakeModelServer() as fake:
        first = await start_editor(
            EDITOR,
            [workspace],
            settings_for(fake),
            env=env_for(tmp_path, **{KILL_AT: TURN_POINTS[0]}),
        )
        fake.script(text_reply("never sent"))
        await killed_during(first, "rhema.turn", {"prompt": "the very first"})
    with FakeModelServer() as fake:
        second = await start_editor(EDITOR, [workspace], settings_for(fake), env=env_for(tmp_path))
        try:
            (listed,) = await second.command("rhema.sessions", {})
            opened = await second.command("rhema.openSession", {"session": listed["session"]})
            assert user_texts(opened) == ["the very first"]
            fake.script(text_reply("answered"))
            more = await second.command(
                "rhema.turn", {"prompt": "again", "session": listed["session"]}
            )
            assert more["turn"] == 2
        finally:
            await second.shutdown_session()


async def test_a_compaction_is_durable_before_its_event_is_sent(
    workspace: Path, tmp_path: Path
) -> None:
    with FakeModelServer() as fake:
        first = await start_editor(
            EDITOR,
            [workspace],
            settings_for(fake),
            env=env_for(tmp_path, **{KILL_AT: COMPACTION_COMMITTED}),
        )
        fake.script(text_reply("one " * 200))
        session = (await first.command("rhema.turn", {"prompt": "first " * 200}))["session"]
        fake.script(text_reply("two " * 200))
        await first.command("rhema.turn", {"prompt": "second", "session": session})
        fake.script(text_reply("THE SUMMARY"))
        await killed_during(first, "rhema.compact", {"session": session})
        assert first.events_of("compaction") == []  # killed before the event
    with FakeModelServer() as fake:
        second = await start_editor(EDITOR, [workspace], settings_for(fake), env=env_for(tmp_path))
        try:
            opened = await second.command("rhema.openSession", {"session": session})
            assert opened["compaction"] is not None
            fake.script(text_reply("three"))
            await second.command("rhema.turn", {"prompt": "third", "session": session})
            assert "THE SUMMARY" in str(fake.requests[-1]["messages"])
        finally:
            await second.shutdown_session()


def test_every_point_is_driven() -> None:
    assert set(TURN_POINTS) | {COMPACTION_COMMITTED} == set(POINTS)
    assert os.environ.get(KILL_AT) is None
