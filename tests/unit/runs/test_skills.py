"""Skills through the pipeline (a real store, the fake model over HTTP) and
as :mod:`rhema_lsp.runs.skills` finds them: names and descriptions in the
system prompt of the first request, the body only after ``skill {name}``,
the skill's other files read through the tool and confined to its folder;
malformed and hostile skills left out, logged once, never fatal; a long one cut with a note."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.runs.extension_files import FILE_CAP, split_front_matter
from rhema_lsp.runs.skills import SkillShelf, find_skills
from tests.fakes.model_server import text_reply, tool_reply
from tests.unit.runs.harness import Bench

BODY = "Write the release notes from `git log`: one line per change, newest first."


def skill(base: Path, folder: str, text: str) -> Path:
    path = base / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def good(name: str, description: str, body: str = BODY) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def system_of(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def tool_texts(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def test_names_and_descriptions_are_in_the_first_request_and_the_body_after_skill(
    bench: Bench, folder: Path, tmp_path: Path
) -> None:
    skill(folder / ".claude" / "skills", "release-notes", good("release-notes", "Draft notes."))
    (folder / ".claude" / "skills" / "release-notes" / "template.md").write_text("## Notes\n")
    user = tmp_path / "config" / "rhema-lsp" / "skills"
    skill(user, "tidy", good("tidy", "Tidy imports.", "Sort the imports."))
    bench.fake.script(
        tool_reply(("skill", {"name": "release-notes"})),
        tool_reply(("skill", {"name": "release-notes", "file": "template.md"})),
        text_reply("Done."),
    )

    report, _ = await bench.turn("write the release notes")

    assert report.outcome.error is None
    first, second, third = bench.fake.requests
    assert "- release-notes: Draft notes." in system_of(first)
    assert "- tidy: Tidy imports." in system_of(first)
    assert BODY not in json.dumps(first)
    assert system_of(second) == system_of(first)  # the cached prefix stays
    [loaded] = tool_texts(second)
    assert BODY in loaded and "- template.md" in loaded
    assert tool_texts(third)[-1] == "## Notes\n"
    tools = [tool["function"]["name"] for tool in first["tools"]]
    assert "skill" in tools
    assert "release-notes" not in json.dumps(first["tools"])  # never in a tool's description


async def test_the_skill_tool_is_offered_in_ask_mode_and_refuses_files_not_its_own(
    bench: Bench, folder: Path
) -> None:
    skill(folder / ".agents" / "skills", "a", good("a", "A skill."))
    bench.fake.script(
        tool_reply(("skill", {"name": "a", "file": "../../../hello.py"})),
        tool_reply(("skill", {"name": "nope"})),
        text_reply("ok"),
    )

    await bench.turn("go", mode="ask")

    assert "skill" in [tool["function"]["name"] for tool in bench.fake.requests[0]["tools"]]
    refused, unknown = tool_texts(bench.fake.requests[2])
    assert "has no file" in refused and "def greet" not in refused
    assert "no skill 'nope'" in unknown


async def test_without_skills_nothing_is_added(bench: Bench) -> None:
    bench.fake.script(text_reply("ok"))
    await bench.turn("hi")
    request = bench.fake.requests[0]
    assert "Skills are available" not in system_of(request)
    assert "skill" not in [tool["function"]["name"] for tool in request["tools"]]


def test_nearer_folders_win_hostile_skills_are_left_out_and_long_ones_cut(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    outside = tmp_path / "outside"
    skill(folder / ".rhema" / "skills", "x", good("x", "Near."))
    skill(folder / ".github" / "skills", "x", good("x", "Far."))
    skill(folder / ".claude" / "skills", "bare", "no front matter\n")
    skill(folder / ".claude" / "skills", "open", "---\nname: open\n")
    skill(folder / ".claude" / "skills", "bad", good("no spaces allowed", "d"))
    skill(folder / ".claude" / "skills", "huge", good("huge", "d", "x" * (FILE_CAP + 1)))
    skill(outside, "leak", good("leak", "Secret."))
    os.symlink(outside / "leak", folder / ".claude" / "skills" / "leak")
    (folder / ".claude" / "skills" / "pipe").mkdir()
    os.mkfifo(folder / ".claude" / "skills" / "pipe" / "SKILL.md")
    os.symlink(outside, folder / ".agents")  # a whole folder linked out: not used

    found = find_skills(folder, tmp_path / "missing")

    assert [(s.name, s.description) for s in found.skills] == [("huge", "d"), ("x", "Near.")]
    problems = {p.shown: p.problem for p in found.problems}
    assert problems[".claude/skills/bare/SKILL.md"].startswith("has no front matter")
    assert "no closing" in problems[".claude/skills/open/SKILL.md"]
    assert "is not letters" in problems[".claude/skills/bad/SKILL.md"]
    huge = found.get("huge")
    assert huge is not None and huge.body.startswith("x" * 1000)
    assert huge.body.rstrip().endswith(f"only its first {FILE_CAP:,} are given.]")
    assert "link out" in problems[".claude/skills/leak/SKILL.md"]
    assert "not a regular file" in problems[".claude/skills/pipe/SKILL.md"]


async def test_a_problem_is_logged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    skill(tmp_path / ".claude" / "skills", "bare", "no front matter\n")
    shelf = SkillShelf(tmp_path / "config.json")
    with caplog.at_level(logging.WARNING, logger="rhema_lsp.runs.skills"):
        await shelf.read(tmp_path)
        await shelf.read(tmp_path)
    assert len([r for r in caplog.records if "bare" in r.getMessage()]) == 1
    assert shelf.found[tmp_path].problems


def test_front_matter_lists_quotes_and_continuations() -> None:
    matter, body = split_front_matter(
        "---\nname: 'q'\ntools: [read_file, grep]\nmore:\n  - a\n  - b\n"
        "description: one\n  two\n---\n\nbody\n"
    )
    assert matter == {
        "name": "q",
        "tools": ["read_file", "grep"],
        "more": ["a", "b"],
        "description": "one two",
    }
    assert body == "body"
    with pytest.raises(ValueError, match="line 2"):
        split_front_matter("---\n: nothing\n---\n")
