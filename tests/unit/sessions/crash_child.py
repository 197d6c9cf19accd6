"""A session driver that can be killed at any persistence point.

Run as ``python -m tests.unit.sessions.crash_child <folder> <workdir> <turns>``.
It opens (or resumes) the folder's single session and runs the scripted
turns the way the server does: the user's input committed before the first
model call, the engine's commit hook before tools, a checkpoint after each
round, ``record_turn`` at the end of a turn. ``RHEMA_CRASH_POINT`` names a
point and ``RHEMA_CRASH_AT`` which occurrence of it (from 1) kills the
process with SIGKILL:

``before_commit``  the assistant's tool-use message is appended, not committed
``in_commit``      a durable commit's rows are inserted, not committed
``after_commit``   a durable commit is done, no tool has started
``in_tool``        the unsafe tool logged its start, not its end
``after_tool``     the round's tools are done, the checkpoint not taken

After each commit returns the driver appends ``<count> <sha256>`` of the
committed prefix to ``<workdir>/commits.log``; tools log to
``<workdir>/side.log``.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import anyio

from rhema_lsp.engine import Agent, Message, Role, Session, StopReason, ToolContext
from rhema_lsp.sessions import SessionStore
from tests.unit.sessions.scripted import NullSink, ScriptedProvider, SideEffectResolver

POINTS = ("before_commit", "in_commit", "after_commit", "in_tool", "after_tool")


def digest(history: list[Message]) -> str:
    """A hash of a history prefix, as stored in the commit log."""
    hasher = hashlib.sha256()
    for message in history:
        hasher.update(message.model_dump_json().encode("utf-8"))
        hasher.update(b"\n")
    return hasher.hexdigest()


def killer(point: str | None, at: int) -> Callable[[str], None]:
    """A point callback that SIGKILLs this process at the ``at``-th ``point``."""
    seen = 0

    def on_point(name: str) -> None:
        nonlocal seen
        if name == point:
            seen += 1
            if seen == at:
                os.kill(os.getpid(), signal.SIGKILL)

    return on_point


def finished_turns(history: list[Message]) -> int:
    return sum(1 for m in history if m.role is Role.ASSISTANT and not m.tool_calls)


async def drive(folder: Path, workdir: Path, turns: int, on_point: Callable[[str], None]) -> str:
    """Run (or resume) the folder's session until ``turns`` turns are done;
    returns the session id."""
    durable = False

    def store_event(name: str) -> None:
        if durable and name == "commit.written":
            on_point("in_commit")
        elif durable and name == "commit.done":
            on_point("after_commit")

    store = await SessionStore.open(folder, on_event=store_event)
    log = workdir / "commits.log"

    def record(session: Session) -> None:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"{len(session.history)} {digest(session.history)}\n")

    async def commit(session_id: str, session: Session, *, is_durable: bool) -> None:
        nonlocal durable
        durable = is_durable
        try:
            await store.commit(session_id, session, durable=is_durable)
        finally:
            durable = False
        record(session)

    listed = await store.list()
    session_id = listed[0].id if listed else (await store.create("crash test")).id
    resolver = SideEffectResolver(workdir / "side.log", on_point)
    ctx = ToolContext(cwd=folder)
    async with store.lease(session_id):
        session, _ = await store.open_and_resume(session_id, resolver, NullSink(), ctx)
        record(session)

        async def hook(current: Session) -> None:
            on_point("before_commit")
            await commit(session_id, current, is_durable=True)

        agent = Agent(ScriptedProvider(), resolver=resolver, commit_hook=hook)
        while True:
            last = session.history[-1] if session.history else None
            if last is None or (last.role is Role.ASSISTANT and not last.tool_calls):
                done = finished_turns(session.history)
                if done >= turns:
                    break
                session.history.append(Message.user(f"prompt {done + 1}"))
                await commit(session_id, session, is_durable=True)
            step = await agent.step(session, NullSink(), ctx)
            tool_use = step.output.stop_reason is StopReason.TOOL_USE
            if tool_use:
                on_point("after_tool")
            await commit(session_id, session, is_durable=False)
            if not tool_use:
                await store.record_turn(session_id, model="scripted")
    await store.close()
    return session_id


def main() -> None:
    folder, workdir, turns = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    point = os.environ.get("RHEMA_CRASH_POINT")
    at = int(os.environ.get("RHEMA_CRASH_AT", "0"))
    anyio.run(drive, folder, workdir, turns, killer(point, at))


if __name__ == "__main__":
    main()
