"""The ACP door in process with the user's own commands: a session's
``available_commands_update`` lists the folder's custom commands and skills
after the built-in ones (a built-in name wins), and ``/greet Ann`` typed as
a prompt is sent to the model expanded; a hook that refuses the prompt is
the prompt's error, and nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import AvailableCommandsUpdate

from tests.acp.client import RecordingClient
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.acp.test_prompt_turns import connect


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.process  # the hook
async def test_custom_commands_are_offered_and_expanded(
    fake: FakeModelServer, folder: Path, tmp_path: Path
) -> None:
    write(
        folder / ".claude" / "commands" / "greet.md", "---\nargument-hint: NAME\n---\nGreet $1.\n"
    )
    write(folder / ".claude" / "commands" / "status.md", "Not the built-in one.\n")
    write(
        folder / ".agents" / "skills" / "tidy" / "SKILL.md",
        "---\nname: tidy\ndescription: Tidy imports.\n---\nSort them.\n",
    )
    client = RecordingClient()
    agent = await connect(fake, client)
    told: list[dict[str, Any]] = []
    agent.after_answer = lambda _session, message: told.append(message)
    fake.script(text_reply("Hello, Ann."))
    try:
        session = (await agent.new_session(cwd=str(folder))).session_id
        await agent.prompt(prompt=[text_block("/greet Ann")], session_id=session)
        config = tmp_path / "config" / "rhema-lsp" / "config.json"
        hook = {"type": "command", "command": "echo 'not today' >&2; exit 2"}
        write(config, json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}))
        with pytest.raises(RequestError, match="not today"):
            await agent.prompt(prompt=[text_block("again")], session_id=session)
        store = await agent.stores.of(folder)
        turns = (await store.info(session)).turns
    finally:
        await agent.shutdown()

    [message] = told
    listed = {c["name"]: c for c in message["params"]["update"]["availableCommands"]}
    assert {"status", "compact", "greet", "tidy"} <= set(listed)
    assert listed["greet"]["input"] == {"hint": "NAME"}
    assert listed["status"]["description"] != "Not the built-in one."
    assert fake.requests[0]["messages"][-1] == {"role": "user", "content": "Greet Ann."}
    assert turns == 1  # the refused prompt stored nothing


async def test_a_loaded_session_is_told_the_commands(fake: FakeModelServer, folder: Path) -> None:
    write(folder / ".rhema" / "commands" / "review.md", "Review the diff.\n")
    fake.script(text_reply("ok"))
    first = await connect(fake, RecordingClient())
    try:
        session = (await first.new_session(cwd=str(folder))).session_id
        await first.prompt(prompt=[text_block("hi")], session_id=session)
    finally:
        await first.shutdown()
    client = RecordingClient()
    again = await connect(fake, client)
    try:
        await again.load_session(cwd=str(folder), session_id=session)
    finally:
        await again.shutdown()
    [update] = [u for _, u in client.updates if isinstance(u, AvailableCommandsUpdate)]
    assert "review" in [command.name for command in update.available_commands]
