"""``update_plan`` around a resolver: its plain schema, the plan told and
answered, a bad plan refused in-band, the tool cap, and the latest plan read
back from a history."""

from __future__ import annotations

from pathlib import Path

from rhema_lsp.engine import (
    Message,
    PlanEntry,
    PlanUpdate,
    ReplaySafety,
    Role,
    ToolCall,
    ToolContext,
    ToolResult,
)
from rhema_lsp.tools import MemoryEditor, Planning, WorkspaceTools, latest_plan

STEPS = [{"content": "read", "status": "completed"}, {"content": "fix", "status": "in_progress"}]


def _planning(tmp_path: Path, limit: int | None = None) -> tuple[Planning, list[PlanUpdate]]:
    told: list[PlanUpdate] = []
    inner = WorkspaceTools([tmp_path], tmp_path, "plan", MemoryEditor([tmp_path]))
    return Planning(inner, told.append, limit=limit), told


def test_the_schema_is_plain_with_the_entries_inlined(tmp_path: Path) -> None:
    planning, _ = _planning(tmp_path)
    spec = planning.specs()[-1]
    assert spec.name == "update_plan"
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "entries": {
                "type": "array",
                "description": "Every step, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {
                            "type": "string",
                            "description": "The step, in a short line (<= 500 chars).",
                        },
                        "status": {
                            "type": "string",
                            "enum": ["pending", "in_progress", "completed"],
                        },
                        "priority": {
                            "type": "string",
                            "enum": ["high", "medium", "low"],
                            "description": "How much the step matters (default medium).",
                        },
                    },
                    "required": ["content", "status"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["entries"],
        "additionalProperties": False,
    }
    assert planning.replay_safety("update_plan") is ReplaySafety.SAFE
    assert planning.replay_safety("read_file") is ReplaySafety.SAFE


async def test_a_plan_is_told_and_answered_and_a_bad_one_refused(tmp_path: Path) -> None:
    planning, told = _planning(tmp_path)
    ok = await planning.resolve(
        ToolCall(id="c1", name="update_plan", args={"entries": STEPS}), ToolContext()
    )
    assert not ok.is_error
    assert ok.content == "Plan updated: 1 of 2 steps completed; in progress: fix."
    assert told == [PlanUpdate((PlanEntry("read", "completed"), PlanEntry("fix", "in_progress")))]
    bad_args: tuple[dict[str, object], ...] = (
        {"entries": []},
        {"entries": [{"content": " ", "status": "pending"}]},
        {},
    )
    for args in bad_args:
        bad = await planning.resolve(
            ToolCall(id="c2", name="update_plan", args=args), ToolContext()
        )
        assert bad.is_error and bad.content.startswith("update_plan: ")
    assert len(told) == 1
    edit = await planning.resolve(
        ToolCall(id="c3", name="edit_file", args={"path": "x", "old_text": "a", "new_text": "b"}),
        ToolContext(),
    )
    assert edit.is_error and "not available in plan mode" in edit.content


def test_update_plan_stays_within_the_tool_cap(tmp_path: Path) -> None:
    planning, _ = _planning(tmp_path, limit=3)
    assert [s.name for s in planning.specs()] == ["read_file", "list_dir", "update_plan"]


def test_the_latest_plan_is_the_last_call_that_succeeded() -> None:
    def call(i: str, entries: object) -> Message:
        return Message(
            role=Role.ASSISTANT,
            content=[ToolCall(id=i, name="update_plan", args={"entries": entries})],
        )

    def result(i: str, error: bool) -> Message:
        return Message(role=Role.TOOL, content=[ToolResult(id=i, content="", is_error=error)])

    first = [{"content": "a", "status": "pending"}]
    history = [
        call("c1", first),
        result("c1", False),
        call("c2", [{"content": "b", "status": "nope"}]),
        result("c2", True),
    ]
    assert latest_plan(history) == (PlanEntry("a", "pending"),)
    assert latest_plan([]) is None
