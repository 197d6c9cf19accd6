"""The headless client, ``rhema-lsp ask``, as a user runs it: a real child
process that starts the real server and talks to a loopback fake model."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rhema_lsp.jsonrpc.child import StdioEndpoint
from tests.fakes.model_server import FakeModelServer, text_reply, too_long_reply, tool_reply

ENTRY = [sys.executable, "-m", "rhema_lsp"]


def ask_command(fake: FakeModelServer, folder: Path, *extra: str) -> list[str]:
    return [
        *ENTRY,
        "ask",
        "--folder",
        str(folder),
        "--provider",
        "custom",
        "--protocol",
        "openai",
        "--base-url",
        fake.base_url,
        "--model",
        "fake-model",
        *extra,
    ]


def run(
    command: list[str], tmp_path: Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
        cwd=cwd,
    )


def test_ask_streams_the_answer_to_stdout_and_the_rest_to_stderr(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    fake.script(
        tool_reply(("read_file", {"path": "hello.py"})),
        text_reply("It greets by name.", thinking="Read the file first."),
    )
    done = run(ask_command(fake, workspace, "what does hello.py do?"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It greets by name.\n"
    assert "thinking: Read the file first." in done.stderr
    assert "✓ read_file hello.py" in done.stderr
    assert "end turn · 2 step(s)" in done.stderr


def test_an_edit_turn_changes_the_file_on_disk_exactly(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    path = workspace / "hello.py"
    inode_before = path.stat().st_ino
    fake.script(
        tool_reply(
            ("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": '"¡hola! "'})
        ),
        text_reply("Now in Spanish."),
    )
    done = run(ask_command(fake, workspace, "--mode", "edit", "spanish please"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert path.read_text() == 'def greet(name):\n    return "¡hola! " + name\n'
    assert path.stat().st_ino != inode_before  # replaced by rename, never rewritten in place
    assert '-    return "hello " + name' in done.stderr
    assert '+    return "¡hola! " + name' in done.stderr
    assert sorted(p.name for p in workspace.iterdir()) == [".rhema", "hello.py"]


def test_a_hostile_path_is_refused_and_nothing_outside_is_read(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("the launch codes\n")
    fake.script(
        tool_reply(("read_file", {"path": "../secret.txt"})),
        text_reply("I could not read it."),
    )
    done = run(ask_command(fake, workspace, "read ../secret.txt"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert "✗ read_file ../secret.txt" in done.stderr
    assert "launch codes" not in json.dumps(fake.requests)
    assert "launch codes" not in done.stdout + done.stderr


def test_json_prints_one_event_per_line(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    fake.script(text_reply("one two three", chunk=4))
    done = run(ask_command(fake, workspace, "--json", "count"), tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert {"session", "turn", "seq", "event"} <= set(lines[0])
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert lines[-1]["event"]["type"] == "turn_end"
    text = "".join(line["event"]["text"] for line in lines if line["event"]["type"] == "text_delta")
    assert text == "one two three"


def test_ctrl_c_cancels_with_130_and_continue_resumes_the_session(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    fake.script(text_reply("word " * 3000, chunk=5, delay=0.01), text_reply("resumed"))
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    process = subprocess.Popen(
        ask_command(fake, workspace, "first question"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    assert process.stdout.read(10) == "word word "  # streaming has begun
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "cancelled" in err
    assert fake.client_closed.wait(5)

    again = run(ask_command(fake, workspace, "--continue", "and now?"), tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "resumed\n"
    sent = [m for m in fake.requests[1]["messages"] if m["role"] == "user"]
    assert sent[0]["content"] == "first question"
    assert sent[-1]["content"] == "and now?"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["ask", "--folder", "/nonexistent/place", "hi"], "is not a folder"),
        (["ask", "--session", "a", "--continue", "hi"], "exclude each other"),
        (["ask", "--file", "missing.py", "hi"], "no such file"),
    ],
)
def test_usage_errors_exit_2_with_one_plain_sentence(
    workspace: Path, tmp_path: Path, arguments: list[str], message: str
) -> None:
    done = run([*ENTRY, *arguments], tmp_path, cwd=workspace)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


def test_sessions_and_status_subcommands(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    fake.script(text_reply("hi"))
    assert run(ask_command(fake, workspace, "Say hi"), tmp_path).returncode == 0
    common = ["--folder", str(workspace), "--provider", "custom", "--protocol", "openai",
              "--base-url", fake.base_url, "--model", "fake-model"]  # fmt: skip
    listed = run([*ENTRY, "sessions", *common, "--json"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    sessions = json.loads(listed.stdout)
    assert [s["title"] for s in sessions] == ["Say hi"]
    user_config = tmp_path / "config" / "rhema-lsp" / "config.json"
    user_config.parent.mkdir(parents=True)
    servers = {"clock": {"command": "mcp-server-time"}, "gone": {"command": "no-such-server"}}
    user_config.write_text(json.dumps({"mcpServers": servers}))
    status = run([*ENTRY, "status", *common], tmp_path)
    assert status.returncode == 0, status.stderr
    assert f"provider: custom · model fake-model · {fake.base_url}" in status.stdout
    # a health check: the servers are started, and one that cannot start says why
    assert "clock (stdio, user config): ready, 2 tool(s)" in status.stdout
    assert (
        "gone (stdio, user config): failed, 0 tool(s) — MCP server gone: "
        "no such command 'no-such-server'"
    ) in status.stdout


def test_the_embedded_model_answers_through_ask(workspace: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    done = run(
        [*ENTRY, "ask", "--folder", str(workspace), "--provider", "embedded", "Say hello."],
        tmp_path,
    )
    assert done.returncode in (0, 3), done.stderr  # 3: its output limit, said on the last line
    assert done.stdout.strip()
    first = done.stderr.splitlines()[0]
    assert first.startswith("provider: embedded · model SmolLM2-135M-Instruct · in process")
    assert "no tools: it answers only from the text it is given" in first
    assert first.endswith("attached: hello.py (name files with --file)")
    assert "end turn" in done.stderr or "max tokens" in done.stderr
    assert time.monotonic() - started < 120


ECHO_PEER = r"""
import json, sys

def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()

def receive():
    length = 0
    while (line := sys.stdin.buffer.readline().strip()):
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))

send({"jsonrpc": "2.0", "id": 7, "method": "workspace/applyEdit", "params": {}})
send({"jsonrpc": "2.0", "method": "reply", "params": receive()})
sys.stdin.buffer.read()
"""


async def test_a_failing_handler_answers_the_server_with_an_error() -> None:
    def broken(params: object) -> object:
        raise ValueError("no edit in these params")

    replies: asyncio.Queue[object] = asyncio.Queue()
    endpoint = await StdioEndpoint.spawn([sys.executable, "-c", ECHO_PEER], dict(os.environ))
    endpoint.on("workspace/applyEdit", broken)
    endpoint.on("reply", replies.put_nowait)
    try:
        reply = await asyncio.wait_for(replies.get(), 30)
    finally:
        endpoint.process.kill()
        await endpoint.close()
    assert reply == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32603, "message": "workspace/applyEdit failed: no edit in these params"},
    }


def test_rewind_restores_the_files_on_disk_after_the_turn_and_reports_conflicts(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    originals = {"a.py": "a = 1\n", "b.py": "b = 2\n", "c.py": "c = 3\n"}
    for name, text in originals.items():
        (workspace / name).write_text(text)
    digests = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in originals.items()}
    fake.script(
        tool_reply(
            ("edit_file", {"path": "a.py", "old_text": "1", "new_text": "10"}),
            ("edit_file", {"path": "b.py", "old_text": "2", "new_text": "20"}),
            ("write_file", {"path": "c.py", "content": "c = 30\n"}),
        ),
        text_reply("done"),
    )
    done = run(ask_command(fake, workspace, "--mode", "edit", "--yes", "change them"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert (workspace / "b.py").read_text() == "b = 20\n"
    listed = run([*ENTRY, "sessions", "--folder", str(workspace), "--json"], tmp_path)
    session = json.loads(listed.stdout)[0]["session"]
    (workspace / "c.py").write_text("c = 30  # mine\n")  # the user, in between

    rewind = [*ENTRY, "rewind", "--folder", str(workspace), "--session", session, "--turn", "1"]
    undone = run([*rewind, "--code"], tmp_path)

    assert undone.returncode == 1, undone.stderr
    assert "restored  a.py" in undone.stdout and "restored  b.py" in undone.stdout
    assert "conflict  c.py: changed since turn 1" in undone.stdout
    assert "--force overwrites them" in undone.stderr
    for name in ("a.py", "b.py"):
        assert hashlib.sha256((workspace / name).read_bytes()).hexdigest() == digests[name]
    assert (workspace / "c.py").read_text() == "c = 30  # mine\n"

    forced = run([*rewind, "--both", "--force"], tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "restored  c.py" in forced.stdout
    assert "conversation: 0 message(s) kept, before turn 1" in forced.stdout
    assert hashlib.sha256((workspace / "c.py").read_bytes()).hexdigest() == digests["c.py"]


def test_rewind_of_some_paths_restores_only_those_files(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    for name in ("a.py", "b.py"):
        (workspace / name).write_text(f"{name[0]} = 1\n")
    fake.script(
        tool_reply(
            ("edit_file", {"path": "a.py", "old_text": "1", "new_text": "10"}),
            ("edit_file", {"path": "b.py", "old_text": "1", "new_text": "10"}),
        ),
        text_reply("done"),
    )
    done = run(ask_command(fake, workspace, "--mode", "edit", "--yes", "change them"), tmp_path)
    assert done.returncode == 0, done.stderr
    listed = run([*ENTRY, "sessions", "--folder", str(workspace), "--json"], tmp_path)
    session = json.loads(listed.stdout)[0]["session"]
    rewind = [*ENTRY, "rewind", "--folder", str(workspace), "--session", session, "--turn", "1"]

    mixed = run([*rewind, "--path", "b.py", "--both"], tmp_path)
    assert mixed.returncode == 2, mixed.stderr
    assert "--path restores files only" in mixed.stderr
    assert (workspace / "b.py").read_text() == "b = 10\n"

    undone = run([*rewind, "--path", "b.py"], tmp_path)
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.splitlines() == ["restored  b.py"]
    assert (workspace / "b.py").read_text() == "b = 1\n"
    assert (workspace / "a.py").read_text() == "a = 10\n"
    # The conversation is untouched: the session still holds its turn.
    listed = run([*ENTRY, "sessions", "--folder", str(workspace), "--json"], tmp_path)
    assert json.loads(listed.stdout)[0]["turns"] == 1


def test_ask_shows_a_compaction_and_the_context_fill(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    fake.script(*(text_reply(f"answer {n}: " + "a" * 1500) for n in range(2)))
    for number in range(2):
        extra = ["--continue"] if number else []
        done = run(ask_command(fake, workspace, *extra, f"question {number}"), tmp_path)
        assert done.returncode == 0, done.stderr
    fake.script(
        too_long_reply("openai", 9000, 4096),
        text_reply("Two questions, both answered."),
        text_reply("third answer"),
    )
    done = run(
        ask_command(fake, workspace, "--continue", "--context-window", "8000", "question 2"),
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "third answer\n"
    assert "⇣ compacted the conversation:" in done.stderr
    assert "context " in done.stderr and "/4096 (" in done.stderr  # the window the error named
