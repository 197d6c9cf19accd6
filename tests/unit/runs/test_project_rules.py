"""The rules files as :mod:`rhema_lsp.runs.project_rules` reads them, through
a real gate on a real folder: the editor's unsaved text, a FIFO, a cut on a
character boundary, the per-result budget, concurrent calls."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import anyio.lowlevel

from rhema_lsp.engine import Event, Message, RulesInUse, Session, ToolCall, ToolResult
from rhema_lsp.runs.project_rules import (
    RULES_CAP,
    RulesResolver,
    TurnRules,
    read_root_rules,
    rules_prompt,
)
from rhema_lsp.tools import MemoryEditor, Workspace
from rhema_lsp.tools.gate import Gate


def gate_on(folder: Path, documents: dict[str, str] | None = None) -> Gate:
    return Gate(Workspace([folder], folder), MemoryEditor([folder], documents=documents))


async def test_the_editors_unsaved_text_of_a_rules_file_is_what_is_given(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("saved\n")
    gate = gate_on(tmp_path, {(tmp_path / "AGENTS.md").as_uri(): "unsaved\n"})
    [root] = await read_root_rules(gate, tmp_path, None)
    assert (root.shown, root.scope, root.text) == ("AGENTS.md", "root", "unsaved\n")


async def test_a_fifo_is_refused_without_blocking_and_the_next_name_is_not_tried(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "AGENTS.md")
    (tmp_path / "CLAUDE.md").write_text("claude\n")
    with anyio.fail_after(10):
        [root] = await read_root_rules(gate_on(tmp_path), tmp_path, None)
    assert root.refused is not None and "not a regular file" in root.refused
    assert rules_prompt([root]) == ""


async def test_a_long_file_is_cut_on_a_character_boundary_with_a_note(tmp_path: Path) -> None:
    text = "é" * RULES_CAP  # two bytes each
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "copilot-instructions.md").write_text(text)
    user = tmp_path / "user.md"
    user.write_text("ü" * RULES_CAP)
    [mine, root] = await read_root_rules(gate_on(tmp_path), tmp_path, user)
    assert root.shown == ".github/copilot-instructions.md"
    assert root.truncated and mine.truncated
    assert root.text.startswith("é" * (RULES_CAP // 2) + "\n[rhema: ")
    assert mine.text.startswith("ü" * (RULES_CAP // 2) + "\n[rhema: ")
    assert f"is {RULES_CAP * 2:,} bytes; only its first {RULES_CAP:,} are given" in root.text


class _Seen:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


class _Echo:
    """A resolver whose results are long, like a big read."""

    def specs(self) -> list[object]:
        return []

    def concurrent(self, call: ToolCall) -> bool:
        return True

    async def resolve_streaming(self, call: ToolCall, ctx: object, *_: object) -> ToolResult:
        await anyio.lowlevel.checkpoint()
        return ToolResult.success(call.id, "y" * 30_000)


async def test_nested_rules_fit_one_result_and_concurrent_calls_give_them_once(
    tmp_path: Path,
) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "a" / "AGENTS.md").write_text("A" * RULES_CAP)
    (deep / "AGENTS.md").write_text("B" * RULES_CAP)
    (deep / "x.py").write_text("")
    rules = TurnRules(gate_on(tmp_path), tmp_path, [])
    seen = _Seen()
    rules.start(Session(history=[Message.user("go")]), seen)
    resolver = RulesResolver(_Echo(), rules, ["read_file"])  # type: ignore[arg-type]
    calls = [ToolCall(id=f"c{n}", name="read_file", args={"path": "a/b/x.py"}) for n in (1, 2)]
    results: list[ToolResult] = []

    async def one(call: ToolCall) -> None:
        results.append(await resolver.resolve_streaming(call, None, print))  # type: ignore[arg-type]

    async with anyio.create_task_group() as group:
        for call in calls:
            group.start_soon(one, call)
    # The farther file comes with one of the two calls, within the cap, and the nearer one
    # (which does not fit beside it) with whichever call there comes after that: the other
    # concurrent call when it asks after the first gave up on it, else the next call.
    later = await resolver.resolve_streaming(calls[0], None, print)  # type: ignore[arg-type]
    everything = [r.content for r in results] + [later.content]
    farther = [c for c in everything if '<rules file="a/AGENTS.md">' in c]
    nearer = [c for c in everything if '<rules file="a/b/AGENTS.md">' in c]
    assert len(farther) == 1 and len(nearer) == 1  # each given once
    assert farther[0] in [r.content for r in results] and farther[0] != nearer[0]
    assert len(farther[0].encode()) <= 24_000
    assert "[... truncated" in farther[0]
    assert [r.shown for r in rules.nested] == ["a/AGENTS.md", "a/b/AGENTS.md"]
    assert seen.events == [
        RulesInUse(files=("a/AGENTS.md",)),
        RulesInUse(files=("a/AGENTS.md", "a/b/AGENTS.md")),
    ]
