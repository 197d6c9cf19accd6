"""Subagents through the pipeline (a real store, the fake model over HTTP):
a ``task`` call runs a child whose request holds its own prompt and not the
parent's conversation, whose answer is the parent's tool result and whose
usage is added to the parent's; two calls in one step overlap in time; an
agent definition's tools are granted but never beyond the parent's mode;
the child is its own stored session; cancelling the parent cancels it."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from rhema_lsp.engine import ToolCallStart
from rhema_lsp.runs.subagents import AgentDef, child_mode, find_agents
from tests.fakes.model_server import Reply, drip_reply, text_reply, tool_reply
from tests.unit.runs.harness import Bench, Recorder


def users(request: dict[str, Any]) -> str:
    return json.dumps([m for m in request["messages"] if m["role"] != "system"])


def tools_of(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


async def test_a_child_sees_only_its_prompt_and_its_answer_is_the_tool_result(
    bench: Bench, folder: Path
) -> None:
    task = {"description": "find greet", "prompt": "CHILD-PROMPT: where is greet defined?"}
    bench.fake.script(
        tool_reply(("task", task), usage=(100, 10)),
        tool_reply(("read_file", {"path": "hello.py"}), usage=(7, 3)),
        text_reply("In hello.py, line 1.", usage=(5, 2)),
        text_reply("It is in hello.py.", usage=(100, 10)),
    )

    report, _ = await bench.turn("PARENT-SECRET: find the greet function")

    parent, child_1, _, parent_2 = bench.fake.requests
    assert "CHILD-PROMPT" in users(child_1) and "PARENT-SECRET" not in json.dumps(child_1)
    assert "task" in tools_of(parent) and "task" not in tools_of(child_1)
    assert set(tools_of(child_1)) >= {"read_file", "grep"}
    assert not {"edit_file", "write_file", "run_command"} & set(tools_of(child_1))
    tool = [m for m in parent_2["messages"] if m["role"] == "tool"]
    assert tool[-1]["content"] == "In hello.py, line 1."
    usage = report.outcome.usage
    assert (usage.input, usage.output) == (212, 25)
    children = [s for s in await bench.store.list() if s.id != report.ref.session]
    [child] = children
    assert child.id.startswith(f"{report.ref.session}-task-") and child.title == "Task: find greet"
    stored = await bench.store.load(child.id)
    assert [m.role for m in stored.history] == ["user", "assistant", "tool", "assistant"]


async def test_two_task_calls_in_one_step_run_at_the_same_time(bench: Bench) -> None:
    both = threading.Barrier(2, timeout=10)
    met: list[bool] = []

    def respond(body: dict[str, Any]) -> Reply:
        text = users(body)
        if "CHILD-" in text and '"role": "tool"' not in text:
            both.wait()  # both children asked before either was answered
            met.append(True)
            return text_reply("child done")
        return text_reply("all done")

    bench.fake.responder = respond
    bench.fake.script(
        tool_reply(
            ("task", {"description": "a", "prompt": "CHILD-A"}),
            ("task", {"description": "b", "prompt": "CHILD-B"}),
        )
    )

    report, _ = await bench.turn("two things")

    assert report.outcome.error is None and met == [True, True]
    results = [m for m in bench.fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in results] == ["child done", "child done"]


async def test_cancelling_the_parent_cancels_its_child(bench: Bench) -> None:
    streaming = threading.Event()

    def respond(body: dict[str, Any]) -> Reply:
        streaming.set()
        return drip_reply()

    bench.fake.responder = respond
    bench.fake.script(tool_reply(("task", {"description": "slow", "prompt": "CHILD-SLOW"})))
    out = Recorder()
    run = await bench.begin("go")

    async def cancel_when_the_child_streams() -> None:
        await anyio.to_thread.run_sync(streaming.wait, abandon_on_cancel=True)
        run.cancel()

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(cancel_when_the_child_streams)
            report, _ = await bench.turn("go", run=run, output=out)
    assert report.outcome.stop_reason == "cancelled"
    assert [e.name for e in out.of(ToolCallStart)] == ["task"]
    [child] = [s for s in await bench.store.list() if s.id != report.ref.session]
    stored = await bench.store.load(child.id)
    assert "CHILD-SLOW" in stored.history[0].text


def test_agent_definitions_grant_tools_up_to_the_parents_mode(tmp_path: Path) -> None:
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "fixer.md").write_text(
        "---\nname: fixer\ndescription: Fixes\ntools: Read, Edit, Bash\n---\nYou fix.\n"
    )
    (agents / "reader.md").write_text("---\ndescription: Reads\ntools: [Read, Grep]\n---\nRead\n")
    (agents / "bad.md").write_text("---\nname: no good\n---\n")
    found, problems = find_agents(tmp_path, tmp_path / "config.json")
    assert sorted(found) == ["fixer", "reader"] and len(problems) == 1
    fixer = found["fixer"]
    assert child_mode("agent", fixer) == (
        "agent",
        {"read_file", "edit_file", "rename_symbol", "run_command"},
    )
    assert child_mode("edit", fixer)[0] == "edit"  # never more than the parent's
    assert child_mode("ask", fixer)[0] == "ask"
    assert child_mode("agent", found["reader"]) == ("ask", {"read_file", "grep"})
    assert child_mode("agent", None) == ("ask", None)
    assert child_mode("agent", AgentDef("x", "", "")) == ("ask", None)
