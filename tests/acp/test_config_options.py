"""Session configuration options over a real connection (the Python SDK's
client): the mode and the model are listed with every session, switched
with ``session/set_config_option`` (the next request goes to the chosen
model, the chosen mode's tools are offered), and every route that changes
the mode tells the client (``current_mode_update``, ``config_option_update``).
This is how CodeCompanion switches modes: it never calls ``set_mode``. A
new session is answered before the provider is resolved: its ``model``
option follows with the listed models as ``config_option_update``.
And the context fill each step reports (``usage_update``), which the same
clients show beside the pickers."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import (
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    UsageUpdate,
)

from tests.acp.client import RecordingClient, start_agent
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply


@pytest.fixture
def models() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="openai", models=["fake-model", "fake-large"]) as server:
        yield server


def _current(options: Sequence[object] | None) -> dict[str, tuple[str, list[str]]]:
    found: dict[str, tuple[str, list[str]]] = {}
    for option in options or []:
        if isinstance(option, SessionConfigOptionBoolean):  # worktree: its own test
            continue
        assert isinstance(option, SessionConfigOptionSelect)
        values = [getattr(choice, "value", None) for choice in option.options]
        found[option.id] = (option.current_value, [str(v) for v in values])
    return found


async def _opened(conn: Any, client: RecordingClient, workspace: Path) -> Any:
    """A new session, once its whole option list (the model listed) came
    after the answer."""
    session = await conn.new_session(cwd=str(workspace))
    assert [o.id for o in session.config_options or []] == ["mode", "thinking"]
    await client.wait_for(lambda: bool(client.of(ConfigOptionUpdate)))
    return session


def _tools(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


async def test_mode_and_model_are_listed_and_switched_as_codecompanion_does(
    models: FakeModelServer, state: Path, workspace: Path
) -> None:
    models.script(
        text_reply("Asked."),
        tool_reply(("run_command", {"command": "echo rhema-ran", "escalate": True})),
        text_reply("Ran."),
    )
    client = RecordingClient(answers=["allow_once"])
    async with start_agent(client, models, state, "--mode", "edit") as (conn, _init):
        session = await _opened(conn, client, workspace)
        sid = session.session_id
        (listed,) = client.of(ConfigOptionUpdate)
        assert _current(listed.config_options) == {
            "mode": ("edit", ["ask", "plan", "edit", "agent"]),
            "model": ("fake-model", ["fake-model", "fake-large"]),
            "thinking": ("default", ["default", "low", "medium", "high"]),
        }
        with pytest.raises(RequestError, match="unknown model 'gpt-nope'"):
            await conn.set_config_option(config_id="model", session_id=sid, value="gpt-nope")
        with pytest.raises(RequestError, match="unknown mode 'yolo'"):
            await conn.set_config_option(config_id="mode", session_id=sid, value="yolo")

        chosen = await conn.set_config_option(config_id="model", session_id=sid, value="fake-large")
        assert _current(chosen.config_options)["model"][0] == "fake-large"
        await conn.prompt(session_id=sid, prompt=[text_block("which model?")])

        switched = await conn.set_config_option(config_id="mode", session_id=sid, value="agent")
        assert _current(switched.config_options)["mode"][0] == "agent"
        await conn.prompt(session_id=sid, prompt=[text_block("run it")])

    first, second, third = models.requests
    assert first["model"] == "fake-large"
    assert "run_command" not in _tools(first)  # edit mode
    assert "run_command" in _tools(second)  # agent mode, switched by option only
    assert client.asked and any(
        m["role"] == "tool" and "rhema-ran" in m["content"] for m in third["messages"]
    )
    modes = [u.current_mode_id for u in client.of(CurrentModeUpdate)]
    assert modes == ["agent"]
    # every change told as config_option_update too; a refused one not
    told = [_current(u.config_options) for u in client.of(ConfigOptionUpdate)]
    assert [(t["mode"][0], t["model"][0]) for t in told] == [
        ("edit", "fake-model"),  # the list that follows session/new
        ("edit", "fake-large"),
        ("agent", "fake-large"),
    ]


async def test_the_thinking_level_is_an_option_and_goes_into_the_next_request(
    models: FakeModelServer, state: Path, workspace: Path
) -> None:
    models.script(text_reply("Quick."), text_reply("Deep."))
    client = RecordingClient()
    async with start_agent(client, models, state) as (conn, _init):
        session = await _opened(conn, client, workspace)
        sid = session.session_id
        (thinking,) = [o for o in session.config_options or [] if o.id == "thinking"]
        assert isinstance(thinking, SessionConfigOptionSelect)
        assert thinking.category == "thought_level"
        await conn.prompt(session_id=sid, prompt=[text_block("first")])
        with pytest.raises(RequestError, match="unknown thinking level 'max'"):
            await conn.set_config_option(config_id="thinking", session_id=sid, value="max")
        chosen = await conn.set_config_option(config_id="thinking", session_id=sid, value="high")
        assert _current(chosen.config_options)["thinking"][0] == "high"
        await conn.prompt(session_id=sid, prompt=[text_block("second")])
    first, second = models.requests
    assert "reasoning_effort" not in first  # default: the server's own
    assert second["reasoning_effort"] == "high"
    listed, told = client.of(ConfigOptionUpdate)
    assert _current(listed.config_options)["thinking"][0] == "default"
    assert _current(told.config_options)["thinking"][0] == "high"


async def test_set_mode_tells_the_config_options_too(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    client = RecordingClient()
    async with start_agent(client, fake, state) as (conn, _init):
        session = await _opened(conn, client, workspace)
        await conn.set_session_mode(mode_id="ask", session_id=session.session_id)
        await client.wait_for(lambda: len(client.of(ConfigOptionUpdate)) == 2)
    update = client.of(ConfigOptionUpdate)[-1]
    assert _current(update.config_options)["mode"] == ("ask", ["ask", "plan", "edit", "agent"])
    assert [u.current_mode_id for u in client.of(CurrentModeUpdate)] == ["ask"]


async def test_each_step_reports_the_context_fill_as_usage_update(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    fake.script(tool_reply(("read_file", {"path": "hello.py"})), text_reply("Read it."))
    client = RecordingClient()
    async with start_agent(client, fake, state, "--context-window", "32000") as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("read hello.py")])
    fills = [(u.used, u.size) for u in client.of(UsageUpdate)]
    assert len(fills) == 2  # one per step
    assert all(size == 32000 for _, size in fills)
    assert 0 < fills[0][0] < fills[1][0]  # the second request carries the first's result


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


async def test_the_worktree_option_runs_a_new_session_in_its_own_worktree(
    fake: FakeModelServer, state: Path, workspace: Path
) -> None:
    _git(workspace, "init", "-q")
    _git(workspace, "add", "hello.py")
    _git(workspace, "commit", "-qm", "init")
    edit = {"path": "hello.py", "old_text": '"hello "', "new_text": '"hi "'}
    fake.script(tool_reply(("edit_file", edit)), text_reply("Done."))
    client = RecordingClient()
    quick = ("--mode", "edit", "--diagnostics-wait", "0")  # and no language server on PATH
    path = {"PATH": "/usr/bin:/bin"}
    async with start_agent(client, fake, state, *quick, booleans=True, env=path) as (conn, _init):
        session = await conn.new_session(cwd=str(workspace))  # no wait for the model list
        sid = session.session_id
        (option,) = [o for o in session.config_options or [] if o.id == "worktree"]
        assert isinstance(option, SessionConfigOptionBoolean) and option.current_value is False
        with pytest.raises(RequestError, match="takes true or false"):
            await conn.set_config_option(config_id="worktree", session_id=sid, value="yes")
        chosen = await conn.set_config_option(config_id="worktree", session_id=sid, value=True)
        assert [o.current_value for o in chosen.config_options if o.id == "worktree"] == [True]
        await conn.prompt(session_id=sid, prompt=[text_block("say hi")])
        with pytest.raises(RequestError, match="runs in a worktree: start a new session"):
            await conn.set_config_option(config_id="worktree", session_id=sid, value=False)
    assert "hello " in (workspace / "hello.py").read_text()  # the checkout is untouched
    assert '"hi "' in _git(workspace, "show", f"rhema/{sid}:hello.py")
    assert _git(workspace, "worktree", "list").count("\n") == 2
