"""A subagent shown as text: ACP's task call content follows the child's
steps (an update not yet sent is replaced, never queued behind), the call's
result keeps the child's call lines; the plain transcript lists the child's
calls under the task; what is shown stays bounded however much the child
does, and hostile arguments (not JSON, huge) are shown as a bare name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from acp.schema import ToolCallProgress

from rhema_lsp.acp.updates import UpdateStream
from rhema_lsp.engine import (
    ChildEvent,
    Event,
    StepStart,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    ToolResultEvent,
    TurnEnd,
    Usage,
)
from rhema_lsp.runs.child_steps import ANSWER_SHOWN, MAX_LINES, ChildSteps
from rhema_lsp.server.transcript import Transcript


def child(event: Event) -> ChildEvent:
    return ChildEvent("task-1", "s-task-1", event)


CHILD_RUN: list[Event] = [
    StepStart(iteration=0),
    ToolCallStart(id="r1", name="read_file"),
    ToolCallArgsDelta(id="r1", delta='{"path": "hello.py"}'),
    ToolResultEvent(id="r1", name="read_file", content="def greet", is_error=False),
    StepStart(iteration=1),
    TextDelta(text="greet is in "),
    TextDelta(text="hello.py"),
    TurnEnd(stop_reason="end_turn", text="greet is in hello.py", steps=2, usage=Usage()),
]


class _Client:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await anyio.sleep(0.005)
        self.sent.append(update)


def text_of(update: Any) -> str:
    return "\n".join(c.content.text for c in update.content or [] if c.type == "content")


async def test_acp_shows_the_childs_steps_as_the_task_calls_content() -> None:
    client = _Client()
    stream = UpdateStream(client, "s")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(stream.pump)
        stream.emit(ToolCallStart(id="task-1", name="task"))
        for event in CHILD_RUN:
            stream.emit(child(event))
            await stream.sent()  # the client reads each one
        stream.emit(ToolResultEvent("task-1", "task", "greet is in hello.py", is_error=False))
        stream.close()
    updates = [u for u in client.sent if isinstance(u, ToolCallProgress)]
    assert all(u.tool_call_id == "task-1" for u in updates)
    assert updates[0].status == "in_progress"
    shown = [text_of(u) for u in updates[1:-1]]
    assert any("- … read_file" in text for text in shown)
    both = ("✓ read_file hello.py", "> greet is in hello.py")
    assert any(all(part in text for part in both) for text in shown)
    assert "subagent end turn" in shown[-1]
    final = updates[-1]
    assert final.status == "completed" and "✓ read_file hello.py" in text_of(final)
    assert text_of(final).endswith("greet is in hello.py")


async def test_acp_replaces_a_child_update_the_client_has_not_read_yet() -> None:
    client = _Client()
    stream = UpdateStream(client, "s")
    stream.emit(ToolCallStart(id="task-1", name="task"))
    for event in CHILD_RUN:
        stream.emit(child(event))  # nothing is sent yet: the pump has not started
    stream.close()
    await stream.pump()
    contents = [text_of(u) for u in client.sent if isinstance(u, ToolCallProgress) and u.content]
    assert len(contents) == 1 and "subagent end turn" in contents[0]


async def test_the_transcript_lists_the_childs_calls_under_the_task(tmp_path: Path) -> None:
    (tmp_path / ".rhema").mkdir()
    path = tmp_path / ".rhema" / "transcripts" / "s.md"
    transcript = Transcript(path, 1, "find greet")
    await transcript.open()
    transcript.emit(ToolCallStart(id="task-1", name="task"))
    for event in CHILD_RUN:
        transcript.emit(child(event))
    transcript.emit(ToolResultEvent("task-1", "task", "greet is in hello.py", is_error=False))
    await transcript.flush()
    text = path.read_text()
    assert "  - ↳ ✓ read_file hello.py" in text
    assert text.index("↳ ✓ read_file") < text.index("- ✓ `task`")
    assert "greet is in hello.py\n\n" not in text.split("- ✓ `task`")[0]  # no child answer inline


def test_what_is_shown_stays_bounded_and_hostile_arguments_are_a_name() -> None:
    steps = ChildSteps()
    for n in range(MAX_LINES + 30):
        steps.take(ToolCallStart(id=f"c{n}", name="grep"))
        steps.take(ToolCallArgsDelta(id=f"c{n}", delta="not json {" * 1000))
        steps.take(ToolResultEvent(id=f"c{n}", name="grep", content="", is_error=n % 2 == 1))
    steps.take(TextDelta(text="x" * (ANSWER_SHOWN * 5)))
    lines = steps.lines()
    assert len(lines) == MAX_LINES and set(lines) == {"✓ grep", "✗ grep"}
    assert len(steps.answer) == ANSWER_SHOWN + 1
    assert steps.ended is None and "subagent" not in steps.markdown()
    assert steps.line("never-seen") == "? tool"
