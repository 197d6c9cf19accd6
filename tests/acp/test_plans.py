"""Plans over ACP, through the real agent and the SDK's client: ``plan`` is a
session mode (read tools and ``update_plan``, no edit tool), each
``update_plan`` is a ``plan`` session update (each entry with the priority
the model gave it, ``medium`` when it gave none), switching to ``edit`` runs the
plan in the same session, and ``session/load`` ends its replay with the plan."""

from __future__ import annotations

from pathlib import Path

from acp import text_block
from acp.schema import AgentPlanUpdate, AvailableCommandsUpdate

from rhema_lsp.tools import TOOLS_BY_MODE
from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

STEPS = ["Read hello.py", "Make the greeting French"]
RANKS = ("low", "high")


def _plan(*statuses: str, priorities: tuple[str, ...] = ()) -> dict[str, object]:
    entries: list[dict[str, str]] = [
        {"content": step, "status": status} for step, status in zip(STEPS, statuses, strict=True)
    ]
    for entry, priority in zip(entries, priorities, strict=False):
        entry["priority"] = priority
    return {"entries": entries}


def _shown(update: AgentPlanUpdate) -> list[tuple[str, str, str]]:
    return [(e.content, e.status, e.priority) for e in update.entries]


async def test_plan_mode_sends_plan_updates_and_edit_mode_runs_the_plan(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(
        tool_reply(("update_plan", _plan("pending", "pending"))),
        text_reply("Two steps."),
        tool_reply(("update_plan", _plan("completed", "in_progress", priorities=RANKS))),
        tool_reply(
            ("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": '"bonjour "'})
        ),
        tool_reply(("update_plan", _plan("completed", "completed", priorities=RANKS))),
        text_reply("Done."),
    )
    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        assert session.modes is not None
        assert "plan" in [m.id for m in session.modes.available_modes]
        sid = session.session_id
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        planned = await conn.prompt(session_id=sid, prompt=[text_block("Plan it")])
        offered = [tool["function"]["name"] for tool in fake.requests[0]["tools"]]
        await conn.set_session_mode(session_id=sid, mode_id="edit")
        ran = await conn.prompt(session_id=sid, prompt=[text_block("go")])

    assert planned.stop_reason == "end_turn" and ran.stop_reason == "end_turn"
    assert offered == [*TOOLS_BY_MODE["plan"], "task", "update_plan"]
    assert [_shown(u) for u in client.of(AgentPlanUpdate)] == [
        [(STEPS[0], "pending", "medium"), (STEPS[1], "pending", "medium")],
        [(STEPS[0], "completed", "low"), (STEPS[1], "in_progress", "high")],  # the model's
        [(STEPS[0], "completed", "low"), (STEPS[1], "completed", "high")],
    ]
    assert "edit_file" in [tool["function"]["name"] for tool in fake.requests[2]["tools"]]
    history = fake.requests[2]["messages"]
    assert history[-1]["content"] == "go"
    assert any(
        call["function"]["name"] == "update_plan"
        for message in history
        for call in message.get("tool_calls") or []
    )

    later = RecordingClient()
    async with start_agent(later, fake, state) as (conn, _init):
        await conn.load_session(cwd=str(workspace), session_id=sid)
    replayed = [u for _, u in later.updates if not isinstance(u, AvailableCommandsUpdate)]
    assert type(replayed[-1]) is AgentPlanUpdate  # the replay ends with the plan
    assert _shown(later.of(AgentPlanUpdate)[-1])[1] == (STEPS[1], "completed", "high")
