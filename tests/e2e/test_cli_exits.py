"""``rhema-lsp ask``'s exit codes and error texts, as a user meets them: each
mistake is a sentence or two naming the flag or variable, and a turn that
never started leaves no session behind."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_cli import ENTRY, ask_command, run
from tests.fakes.model_server import FakeModelServer, error_reply, raw_reply, text_reply, tool_reply


def run_with(
    command: list[str],
    tmp_path: Path,
    *,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), **(env or {})}
    done = subprocess.run(
        command,
        capture_output=True,
        input=stdin if stdin is not None else b"",
        timeout=120,
        env=environment,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def no_session_in(folder: Path) -> bool:
    store = folder / ".rhema" / "sessions.sqlite3"
    if not store.exists():
        return True
    with contextlib.closing(sqlite3.connect(store)) as db:
        return int(db.execute("SELECT count(*) FROM sessions").fetchone()[0]) == 0


def sentences(text: str) -> int:
    body = text.strip().removeprefix("rhema-lsp: ")
    return body.count(". ") + body.count("; ") + 1


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--provider", "foo", "hi"], "--provider 'foo' is unknown: pick one of openai,"),
        (
            ["--provider", "custom", "--protocol", "openai", "--base-url", "ftp://x", "hi"],
            "--base-url 'ftp://x' is not an http(s) URL",
        ),
        (["--provider", "custom", "hi"], "--provider custom needs --base-url"),
        (["--provider", "openai", "hi"], "export OPENAI_API_KEY=... in this shell"),
        (["--provider", "embedded", "--base-url", "http://127.0.0.1:1/v1", "hi"], "in process"),
        ([""], "the prompt argument is blank"),
        (["   \n "], "the prompt argument is blank"),
        (["--max-steps", "0", "hi"], "--max-steps 0: input should be greater than or equal to 1"),
        (["--max-tokens", "3", "hi"], "--max-tokens 3:"),
        (["--prompt-file", "p.txt", "hi"], "give the prompt once"),
        (["--prompt-file", "missing.txt"], "--prompt-file missing.txt: No such file"),
        (["--file", "../outside.py", "hi"], "--file ../outside.py is outside"),
        (["--session", "nope", "--provider", "embedded", "hi"], "--session nope: no such session"),
        (["--provider", "embedded", "--mode", "edit", "hi"], "--mode edit needs tools"),
    ],
)
def test_usage_errors_exit_2_name_the_flag_and_leave_no_session(
    workspace: Path, tmp_path: Path, flags: list[str], expected: str
) -> None:
    (tmp_path / "outside.py").write_text("x = 1\n")
    done = run_with(
        [*ENTRY, "ask", "--folder", str(workspace), *flags],
        tmp_path,
        env={"OPENAI_API_KEY": ""},
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("provider: ")]
    assert len(lines) == 1, done.stderr  # one error line, after the provider line if any
    error = lines[0]
    assert error.startswith("rhema-lsp: ") and expected in error
    assert "rhema." not in done.stderr  # the editor's setting names are not the terminal's
    assert "Traceback" not in done.stderr
    assert sentences(error) <= 3
    assert len(error) < 300 + len(str(workspace)) * 2
    assert no_session_in(workspace)


def test_no_prompt_at_all_says_where_a_prompt_can_come_from(
    workspace: Path, tmp_path: Path
) -> None:
    done = run_with([*ENTRY, "ask", "--folder", str(workspace)], tmp_path, stdin=b"")
    assert done.returncode == 2
    assert "the prompt on stdin is blank" in done.stderr
    assert "--prompt-file" in done.stderr


@pytest.mark.parametrize("how", ["pipe", "dash", "file", "file-dash"])
def test_a_1mb_prompt_from_stdin_or_a_file(
    fake: FakeModelServer, workspace: Path, tmp_path: Path, how: str
) -> None:
    prompt = ("Summarise these lines, é and 字 included.\n" * 25_000)[: 1 << 20]
    fake.script(text_reply("Read it all."))
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text(prompt, encoding="utf-8")
    extra = {
        "pipe": [],
        "dash": ["-"],
        "file": ["--prompt-file", str(prompt_file)],
        "file-dash": ["--prompt-file", "-"],
    }[how]
    stdin = b"" if how == "file" else prompt.encode("utf-8")
    done = run_with(ask_command(fake, workspace, *extra), tmp_path, stdin=stdin)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Read it all.\n"
    sent = [m for m in fake.requests[0]["messages"] if m["role"] == "user"]
    assert sent[-1]["content"] == prompt


def test_a_provider_failure_exits_1(fake: FakeModelServer, workspace: Path, tmp_path: Path) -> None:
    fake.script(error_reply(400, {"error": {"message": "model not found", "type": "x"}}))
    done = run(ask_command(fake, workspace, "hi"), tmp_path)
    assert done.returncode == 1, done.stderr
    assert "model not found" in done.stderr


def _openai_chunk(delta: dict[str, object], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return "data: " + json.dumps(
        {"id": "x", "object": "chat.completion.chunk", "choices": [choice]}
    )


def test_the_token_limit_exits_3_with_a_reason(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    fake.script(
        raw_reply(
            [
                _openai_chunk({"role": "assistant", "content": "The answer is"}),
                "",
                _openai_chunk({}, "length"),
                "",
                "data: [DONE]",
                "",
            ]
        )
    )
    done = run(ask_command(fake, workspace, "--max-tokens", "16", "hi"), tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "The answer is\n"
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("rhema-lsp: stopped before an answer: the model reached its output")
    assert "--max-tokens" in last


def test_the_step_limit_exits_3_with_a_reason(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    fake.script(tool_reply(("read_file", {"path": "hello.py"})))
    done = run(ask_command(fake, workspace, "--max-steps", "1", "hi"), tmp_path)
    assert done.returncode == 3, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("rhema-lsp: stopped before an answer: the turn used all its steps")
    assert "--max-steps" in last


def test_status_says_which_provider_and_why(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    common = ["--folder", str(workspace), "--provider", "custom", "--protocol", "openai",
              "--base-url", fake.base_url, "--model", "fake-model"]  # fmt: skip
    done = run([*ENTRY, "status", *common], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"provider: custom · model fake-model · {fake.base_url}" in lines
    assert "source:   custom --base-url (openai), no key" in lines
    assert "mode:     ask for rhema-lsp ask (--mode); edit in an editor" in lines
    assert not any(line.rstrip().endswith("·") for line in lines)


def test_the_first_line_of_ask_names_the_provider(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    fake.script(text_reply("hi"))
    done = run(ask_command(fake, workspace, "hi"), tmp_path)
    assert done.returncode == 0, done.stderr
    first = done.stderr.splitlines()[0]
    assert first == (
        f"provider: custom · model fake-model · {fake.base_url} — custom --base-url (openai), "
        "no key"
    )


NO_KEYS = {
    name: ""
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "OPENROUTER_API_KEY",
        "GROQ_API_KEY",
        "RHEMA_API_KEY",
    )
}


def test_nothing_set_up_exits_2_with_the_choices_one_per_line(
    workspace: Path, tmp_path: Path
) -> None:
    prompt = ["What does hello.py do?"]
    done = run_with([*ENTRY, "ask", "--folder", str(workspace), *prompt], tmp_path, env=NO_KEYS)
    assert done.returncode == 2, done.stderr
    head, *choices = done.stderr.splitlines()
    assert head == (
        "rhema-lsp: no model provider is set up (the demo model is used only when --provider "
        "names it). Choose one:"
    )
    assert all(line.startswith("  - ") for line in choices), choices
    text = "\n".join(choices)
    for needle in ("11434", "--provider openai with OPENAI_API_KEY", "--base-url with --protocol"):
        assert needle in text
    assert choices[-1].startswith("  - the demo model: --provider embedded (SmolLM2-135M-Instruct")
    assert "no tools, no edits, not for real work" in choices[-1]
    assert "rhema." not in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""
    assert no_session_in(workspace)


def test_status_with_nothing_set_up_shows_everything_else_and_what_to_do(
    workspace: Path, tmp_path: Path
) -> None:
    """Issue 42: the moment a user most needs ``status``, it shows the
    folders, rules, MCP servers and language servers, and the provider line
    says what to do (the flags and the environment variables)."""
    (workspace / "AGENTS.md").write_text("Answer in one sentence.\n")
    config = tmp_path / "config" / "rhema-lsp" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {"gone": {"command": "no-such-server"}}}))
    env = {**NO_KEYS, "XDG_CONFIG_HOME": str(tmp_path / "config")}

    done = run_with([*ENTRY, "status", "--folder", str(workspace)], tmp_path, env=env)

    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("rhema-lsp ")
    assert lines[1] == (
        "provider: none — no model provider is set up (the demo model is used only when "
        "--provider names it). Choose one:"
    )
    choices = "\n".join(line for line in lines if line.startswith("  - "))
    for needle in ("11434", "--provider openai with OPENAI_API_KEY", "--base-url with --protocol"):
        assert needle in choices
    assert "--provider embedded" in choices
    assert f"folders:  {workspace}" in lines
    assert "mode:     ask for rhema-lsp ask (--mode); edit in an editor" in lines
    assert "rules:    AGENTS.md" in lines
    assert "mcp:      1 server(s)" in lines
    assert any(line.startswith("  gone (stdio, user config): failed") for line in lines)
    assert any(line.startswith("language: the agent's own: ") for line in lines)
    assert not any(line.startswith("source:") for line in lines)
    assert no_session_in(workspace)


def test_status_json_with_nothing_set_up_carries_the_setup(workspace: Path, tmp_path: Path) -> None:
    done = run_with(
        [*ENTRY, "status", "--folder", str(workspace), "--json"],
        tmp_path,
        env={**NO_KEYS, "GROQ_API_KEY": "", "RHEMA_API_KEY": "sk-custom-secret"},
    )
    assert done.returncode == 2, done.stderr
    shown = json.loads(done.stdout)
    assert shown["provider"]["error"].startswith(
        "no model provider is set up (the demo model is used only when --provider names it)"
    )
    assert shown["provider"]["source"] is None
    assert shown["folders"] == [str(workspace)]  # the rest of the status, as ever
    assert "mcpServers" in shown and "rules" in shown and "languageServers" in shown
    assert shown["setup"]["configured"] is False
    assert shown["setup"]["keys"] == ["RHEMA_API_KEY"]  # named, never its value
    assert "sk-custom-secret" not in done.stdout
    assert shown["setup"]["demo"]["name"] == "embedded"


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("above-home", "holds your home directory"),
        ("/etc", "the system's own files"),
        ("/tmp", "a system folder"),
    ],
)
def test_a_folder_that_confines_nothing_exits_2_with_the_reason(
    fake: FakeModelServer, tmp_path: Path, where: str, reason: str
) -> None:
    home = tmp_path / "home" / "alice"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("SENTINEL-AWS")
    folder = home.parent if where == "above-home" else Path(where)
    fake.script(tool_reply(("read_file", {"path": "alice/.aws/credentials"})))
    done = run_with(
        ask_command(fake, folder, "--mode", "agent", "--yes", "read the keys"),
        tmp_path,
        env={"HOME": str(home), "OPENAI_API_KEY": ""},
    )
    assert done.returncode == 2, done.stderr
    assert f"rhema-lsp: --folder refused: {folder}" in done.stderr
    assert reason in done.stderr
    assert "SENTINEL-AWS" not in done.stdout + done.stderr
    assert fake.requests == []
    assert not (home.parent / ".rhema").exists()
