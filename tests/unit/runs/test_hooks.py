"""Hooks through the pipeline (a real store, the fake model over HTTP, real
``sh`` hooks): a user-config ``PreToolUse`` hook that exits 2 keeps
``run_command "rm -rf build"`` from running and its stderr reaches the
model; ``PostToolUse`` gets ``edit_file``'s JSON; ``UserPromptSubmit``
refuses a prompt (to the user) or adds context; ``Stop`` keeps a turn going;
a workspace's hooks run only once consented to, asked again when the file
changes; and the hostile ones: a hook that hangs, floods its output or dies
by a signal is reported, never a crash."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from rhema_lsp.runs.hook_config import Hook, Hooks, parse_hooks
from rhema_lsp.runs.hook_events import PromptBlocked
from rhema_lsp.runs.hook_runner import OUTPUT_CAP, run_hook
from rhema_lsp.runs.workplace import Plan
from rhema_lsp.tools import MemoryEditor
from rhema_lsp.vocabulary import TRUST_CHOICES
from tests.fakes.model_server import text_reply, tool_reply
from tests.unit.runs.harness import Bench

pytestmark = pytest.mark.process

USE_NOW, ALWAYS, NOT_NOW, NEVER = TRUST_CHOICES


def user_hooks(tmp_path: Path, hooks: dict[str, Any], **extra: Any) -> Path:
    config = tmp_path / "config" / "rhema-lsp" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"hooks": hooks, **extra}))
    return config


def entry(command: str, matcher: str = "", timeout: float | None = None) -> list[dict[str, Any]]:
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    return [{"matcher": matcher, "hooks": [hook]}]


def tool_texts(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def test_a_pre_tool_use_hook_exiting_2_blocks_rm_and_its_stderr_reaches_the_model(
    bench: Bench, folder: Path, tmp_path: Path
) -> None:
    (folder / "build").mkdir()
    (folder / "build" / "keep.o").write_text("x")
    seen = tmp_path / "seen.json"
    user_hooks(
        tmp_path,
        {
            "PreToolUse": entry(
                f"cat > {seen}; echo 'rm -rf is not allowed here' >&2; exit 2", "Bash"
            ),
            "PostToolUse": entry(f"cat > {tmp_path / 'post.json'}", "Edit|Write"),
        },
    )
    bench.settings = bench.settings.model_copy(update={"command_allowlist": ["rm"]})
    bench.fake.script(tool_reply(("run_command", {"command": "rm -rf build"})), text_reply("ok"))

    await bench.turn("clean the build", mode="agent")

    assert (folder / "build" / "keep.o").exists()
    [blocked] = tool_texts(bench.fake.requests[1])
    assert "rm -rf is not allowed here" in blocked
    event = json.loads(seen.read_text())
    assert (event["hook_event_name"], event["tool_name"]) == ("PreToolUse", "run_command")
    assert event["tool_input"] == {"command": "rm -rf build"}
    assert event["cwd"] == str(folder) and event["session_id"]
    assert not (tmp_path / "post.json").exists()  # run_command is not Edit|Write


async def test_post_tool_use_receives_edit_files_json(
    bench: Bench, folder: Path, tmp_path: Path
) -> None:
    post = tmp_path / "post.json"
    user_hooks(tmp_path, {"PostToolUse": entry(f"cat > {post}", "Edit|Write")})
    edit = {"path": "hello.py", "old_text": '"hello "', "new_text": '"hi "'}
    bench.fake.script(tool_reply(("edit_file", edit)), text_reply("done"))

    await bench.turn("say hi")

    event = json.loads(post.read_text())
    assert (event["hook_event_name"], event["tool_name"]) == ("PostToolUse", "edit_file")
    assert event["tool_input"] == edit
    assert event["tool_response"]["is_error"] is False
    assert event["tool_response"]["content"] == tool_texts(bench.fake.requests[1])[0]


async def test_user_prompt_submit_refuses_or_adds_context_and_stop_keeps_the_turn_going(
    bench: Bench, folder: Path, tmp_path: Path
) -> None:
    user_hooks(
        tmp_path,
        {
            "UserPromptSubmit": entry(
                "grep -q secret && { echo 'no secrets please' >&2; exit 2; }; echo 'Ticket: T-1'"
            ),
            "Stop": entry(
                "grep -q '\"stop_hook_active\": false' && "
                'echo \'{"decision": "block", "reason": "run the tests"}\'; exit 0'
            ),
        },
    )
    with pytest.raises(PromptBlocked, match="no secrets please"):
        await bench.door.expand(Plan("my secret", "my secret", "edit", 5), bench.place)
    plan, _ = await bench.door.expand(Plan("fix it", "fix it", "edit", 5), bench.place)
    assert plan.prompt == "fix it\n\nTicket: T-1"

    bench.fake.script(text_reply("first"), text_reply("tests pass"))
    report, _ = await bench.turn("fix it")

    assert report.outcome.text == "tests pass" and report.outcome.steps == 2
    last = bench.fake.requests[1]["messages"][-1]
    assert last["role"] == "user" and "run the tests" in last["content"]


async def test_workspace_hooks_run_only_once_consented_and_ask_again_when_changed(
    folder: Path, tmp_path: Path
) -> None:
    settings = folder / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"Stop": entry("echo one")}}))
    config = tmp_path / "config" / "rhema-lsp" / "config.json"
    editor = MemoryEditor([folder])
    editor.answers = [NOT_NOW, ALWAYS]

    assert not (await Hooks(config).load(folder, editor)).matching("Stop")
    assert not (await Hooks(config).load(folder, None)).matching("Stop")  # nobody to ask
    assert (await Hooks(config).load(folder, editor)).matching("Stop")
    assert len(editor.asked) == 2 and editor.asked[0][1] == TRUST_CHOICES
    assert (await Hooks(config).load(folder, None)).matching("Stop")  # remembered

    settings.write_text(json.dumps({"hooks": {"Stop": entry("echo two")}}))
    assert not (await Hooks(config).load(folder, None)).matching("Stop")
    editor.answers = [USE_NOW]
    [hook] = (await Hooks(config).load(folder, editor)).matching("Stop")
    assert hook.command == "echo two" and len(editor.asked) == 3


def test_matchers_and_malformed_entries() -> None:
    hooks = parse_hooks(
        {
            "PreToolUse": [
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "a"}]},
                {"matcher": "*", "hooks": [{"type": "command", "command": "b"}]},
                {"matcher": "(", "hooks": [{"type": "command", "command": "c"}]},
                {"matcher": "x", "hooks": [{"type": "prompt", "prompt": "?"}]},
            ],
            "Nope": [],
        },
        "user config",
    )
    assert [h.command for h in hooks.matching("PreToolUse", "write_file")] == ["a", "b"]
    assert [h.command for h in hooks.matching("PreToolUse", "edit_file")] == ["a", "b"]
    assert [h.command for h in hooks.matching("PreToolUse", "run_command")] == ["b"]
    assert len(hooks.problems) == 3


async def test_hostile_hooks_hang_flood_or_die_and_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-seen")
    roots = [tmp_path]
    started = time.monotonic()
    with anyio.fail_after(20):
        hung, flood, killed, keys = await _all(
            run_hook(Hook("sleep 30", 0.5, "test"), {}, tmp_path, roots),
            run_hook(Hook("yes", 1.0, "test"), {}, tmp_path, roots),
            run_hook(Hook("kill -9 $$", 5, "test"), {}, tmp_path, roots),
            run_hook(Hook("env", 5, "test"), {}, tmp_path, roots),
        )
    assert time.monotonic() - started < 10
    assert hung.problem == "timed out after 0.5 s" and hung.report()
    assert flood.problem is not None and len(flood.stdout) == OUTPUT_CAP
    assert killed.problem == "was killed by SIGKILL" and killed.verdict().decision is None
    assert "sk-never-seen" not in keys.stdout and f"CLAUDE_PROJECT_DIR={tmp_path}" in keys.stdout
    unreadable = await run_hook(Hook("exit 2", 5, "test"), {"x": "y" * 1_000_000}, tmp_path, roots)
    assert unreadable.verdict().decision == "block"  # stdin never read: no hang, still a block


async def _all(*calls: Any) -> list[Any]:
    results: list[Any] = [None] * len(calls)

    async def one(index: int, call: Any) -> None:
        results[index] = await call

    async with anyio.create_task_group() as group:
        for index, call in enumerate(calls):
            group.start_soon(one, index, call)
    return results
