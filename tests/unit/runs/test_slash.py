"""Custom slash commands as :mod:`rhema_lsp.runs.slash` finds and expands
them, and through the door kit (:meth:`Door.expand`, which every door
calls): arguments, front matter, skills as commands, nearer folders first,
hostile and malformed files left out; a prompt naming no command unchanged."""

from __future__ import annotations

from pathlib import Path

from rhema_lsp.runs.slash import expand, fill, find_commands
from rhema_lsp.runs.workplace import Plan
from tests.unit.runs.harness import Bench


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_arguments_fill_the_template() -> None:
    assert fill("Hi $1 and $2 ($ARGUMENTS)", 'Ann "Bob Smith"') == (
        'Hi Ann and Bob Smith (Ann "Bob Smith")'
    )
    assert fill("Hi $3.", "one") == "Hi ."
    assert fill("Review the diff.", "carefully") == "Review the diff.\n\nARGUMENTS: carefully"
    assert fill("Review the diff.\n", "") == "Review the diff."
    assert fill("Odd $1", 'an "unclosed quote') == "Odd an"


def test_commands_from_every_folder_nearer_first_with_skills_as_commands(tmp_path: Path) -> None:
    folder, config = tmp_path / "ws", tmp_path / "config" / "rhema-lsp" / "config.json"
    write(folder / ".rhema" / "commands" / "fix.md", "---\nmode: edit\nmodel: big\n---\nFix $1\n")
    write(folder / ".claude" / "commands" / "fix.md", "Far fix\n")
    write(folder / ".github" / "prompts" / "review.prompt.md", "---\ndescription: Rev\n---\nGo\n")
    write(folder / ".github" / "prompts" / "notes.md", "not a prompt file\n")
    write(config.parent / "commands" / "mine.md", "Mine: $ARGUMENTS\n")
    write(folder / ".claude" / "commands" / "wrong.md", "---\nmode: yolo\n---\nx\n")
    write(folder / ".claude" / "commands" / "empty.md", "---\ndescription: d\n---\n")
    write(
        folder / ".claude" / "skills" / "tidy" / "SKILL.md",
        "---\nname: tidy\ndescription: Tidy up.\n---\nSort the imports.\n",
    )

    found = find_commands(folder, config)

    assert [c.name for c in found.commands] == ["fix", "mine", "review", "tidy"]
    fix = expand("/fix hello.py", found)
    assert fix is not None
    assert (fix.prompt, fix.mode, fix.model) == ("Fix hello.py", "edit", "big")
    narrowed = expand("/fix it", found, "ask")  # a workspace command never widens the mode
    assert narrowed is not None and narrowed.mode is None
    write(config.parent / "commands" / "wide.md", "---\nmode: agent\n---\nGo\n")
    wide = expand("/wide", find_commands(folder, config), "ask")  # the user's own may
    assert wide is not None and wide.mode == "agent"
    assert found.get("review") is not None and found.get("review").description == "Rev"  # type: ignore[union-attr]
    tidy = expand("/tidy now", found)
    assert tidy is not None and tidy.prompt == "Sort the imports.\n\nARGUMENTS: now"
    problems = {p.shown: p.problem for p in found.problems}
    assert "is none of" in problems[".claude/commands/wrong.md"]
    assert "no text" in problems[".claude/commands/empty.md"]
    assert expand("/unknown thing", found) is None
    assert expand("/etc/passwd is odd", found) is None
    assert expand("fix it /fix", found) is None


async def test_the_door_kit_expands_the_typed_prompt_and_keeps_the_title(
    bench: Bench, folder: Path
) -> None:
    write(folder / ".claude" / "commands" / "greet.md", "---\nmode: ask\n---\nGreet $1.\n")
    typed = "/greet Ann"
    plan = Plan(prompt=f"{typed}\n\n<context/>", title=typed, mode="edit", max_steps=3)

    expanded, model = await bench.door.expand(plan, bench.place)

    assert (expanded.prompt, expanded.title, expanded.mode, model) == (
        "Greet Ann.\n\n<context/>",
        typed,
        "ask",
        None,
    )
    same, _ = await bench.door.expand(Plan("/nothing here", "/nothing here", "ask", 3), bench.place)
    assert same.prompt == "/nothing here"
