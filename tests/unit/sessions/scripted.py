"""A scripted model and a resolver with a safe and an unsafe tool, for the
session tests and the crash child.

The model is stateless: its answer depends only on the request's history, so
a process that crashed and resumed gets the same answers (and the same call
ids) as one that did not. Each turn is three steps: ``read`` + ``write``,
then ``write``, then a final text. The ``write`` tool is replay-unsafe and
logs ``start <id>`` / ``end <id>`` lines to a side file around its effect.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rhema_lsp.engine import (
    Event,
    EventSink,
    Message,
    ModelOutput,
    ModelRequest,
    Part,
    ReplaySafety,
    Role,
    StopReason,
    TextPart,
    ToolCall,
    ToolContext,
    ToolResolver,
    ToolResult,
    ToolSpec,
)

STEPS_PER_TURN = 3


class NullSink:
    """Drops every event."""

    def emit(self, event: Event) -> None:
        del event


def position(history: list[Message]) -> tuple[int, int]:
    """(turn number from 1, steps already answered in that turn)."""
    turn = sum(1 for message in history if message.role is Role.USER)
    last_user = max(i for i, m in enumerate(history) if m.role is Role.USER)
    steps = sum(1 for m in history[last_user + 1 :] if m.role is Role.ASSISTANT)
    return turn, steps


class ScriptedProvider:
    """Answers by position in the turn (see the module docstring)."""

    async def complete(self, request: ModelRequest, sink: EventSink) -> ModelOutput:
        del sink
        turn, step = position(request.messages)
        if step == 0:
            calls = [
                ToolCall(id=f"t{turn}-s0-read", name="read", args={"key": f"k{turn}"}),
                ToolCall(id=f"t{turn}-s0-write", name="write", args={"key": f"k{turn}"}),
            ]
        elif step == 1:
            calls = [ToolCall(id=f"t{turn}-s1-write", name="write", args={"key": f"k{turn}b"})]
        else:
            return ModelOutput(
                message=Message.assistant(f"done {turn}"), stop_reason=StopReason.END_TURN
            )
        content: list[Part] = [TextPart(text=f"turn {turn} step {step}")]
        content.extend(calls)
        return ModelOutput(
            message=Message(role=Role.ASSISTANT, content=content),
            stop_reason=StopReason.TOOL_USE,
        )


class SideEffectResolver(ToolResolver):
    """``read`` (safe, no effect) and ``write`` (unsafe, logged to a file).

    ``on_point`` is called with ``"in_tool"`` after ``write`` logged its
    start and before its end, so a crash test can kill it mid-effect.
    """

    def __init__(self, side_file: Path, on_point: Callable[[str], None] | None = None) -> None:
        self.side_file = side_file
        self.on_point = on_point

    def specs(self) -> list[ToolSpec]:
        return [
            ToolSpec(name="read", description="read a key", parameters={"type": "object"}),
            ToolSpec(name="write", description="write a key", parameters={"type": "object"}),
        ]

    def replay_safety(self, name: str) -> ReplaySafety:
        return ReplaySafety.SAFE if name == "read" else ReplaySafety.UNSAFE

    def _log(self, line: str) -> None:
        with self.side_file.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    async def resolve(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        if call.name == "read":
            self._log(f"read {call.id}")
            return ToolResult.success(call.id, f"value of {call.args.get('key')}")
        self._log(f"start {call.id}")
        if self.on_point is not None:
            self.on_point("in_tool")
        self._log(f"end {call.id}")
        return ToolResult.success(call.id, f"wrote {call.args.get('key')}")


def side_lines(side_file: Path) -> list[str]:
    """The side file's lines (none when it does not exist)."""
    if not side_file.exists():
        return []
    return side_file.read_text(encoding="utf-8").splitlines()
