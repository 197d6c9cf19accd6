"""A protected file (``.env*``, keys) over ACP: the client is asked for
its text with ``fs/read_text_file`` only after the user allowed reading it
(the permission request comes first, and is asked once per call); on a
refusal, or for a call that does not read it (an edit, a search), the
client never hands it over."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.runs.settings import Settings
from tests.acp.client import RecordingClient
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

SECRET = "API_TOKEN=SENTINEL-ENV\n"


@dataclass
class OrderedClient(RecordingClient):
    """Records permission requests and reads in the order they came."""

    events: list[tuple[str, str]] = field(default_factory=list)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.events.append(("read", Path(path).name))
        return await super().read_text_file(session_id, path, line, limit, **kwargs)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.events.append(("asked", tool_call.title or ""))
        return await super().request_permission(session_id, tool_call, options, **kwargs)


@pytest.fixture
async def opened(
    fake: FakeModelServer, folder: Path
) -> AsyncIterator[tuple[RhemaAcpAgent, OrderedClient, str]]:
    (folder / ".env").write_text(SECRET)
    client = OrderedClient(buffers={str(folder / ".env"): SECRET + "UNSAVED=1\n"})
    settings = Settings.model_validate(
        {
            "provider": "custom",
            "protocol": "openai",
            "baseUrl": fake.base_url,
            "model": "fake-model",
            "mode": "edit",
        }
    )
    agent = RhemaAcpAgent(settings)
    agent.on_connect(client)
    await agent.initialize(
        protocol_version=1,
        client_capabilities=ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
        ),
        client_info=Implementation(name="unit", version="1"),
    )
    try:
        session = (await agent.new_session(cwd=str(folder))).session_id
        yield agent, client, session
    finally:
        await agent.shutdown()


def _tool_result(fake: FakeModelServer) -> str:
    return str(fake.requests[-1]["messages"][-1]["content"])


async def test_permission_is_asked_before_the_client_hands_a_protected_file_over(
    opened: tuple[RhemaAcpAgent, OrderedClient, str], fake: FakeModelServer
) -> None:
    agent, client, session = opened
    client.answers = ["allow_once"]
    fake.script(tool_reply(("read_file", {"path": ".env"})), text_reply("Read it."))
    await agent.prompt(prompt=[text_block("show .env")], session_id=session)
    env_events = [event for event in client.events if event[0] == "asked" or event[1] == ".env"]
    assert env_events == [("asked", env_events[0][1]), ("read", ".env")]
    assert len(client.asked) == 1  # the call's own question was answered from it
    assert "UNSAVED=1" in _tool_result(fake)  # the editor's buffer, once allowed


@pytest.mark.parametrize("answer", ["reject_once", None])
async def test_a_refused_protected_read_never_reaches_the_client(
    opened: tuple[RhemaAcpAgent, OrderedClient, str], fake: FakeModelServer, answer: str | None
) -> None:
    agent, client, session = opened
    client.answers = [answer]
    fake.script(tool_reply(("read_file", {"path": ".env"})), text_reply("Refused."))
    await agent.prompt(prompt=[text_block("show .env")], session_id=session)
    assert len(client.asked) == 1
    assert ".env" not in client.reads and not any(r.endswith(".env") for r in client.reads)
    result = _tool_result(fake)
    assert "did not allow" in result and "SENTINEL" not in result


async def test_a_call_that_does_not_read_a_protected_file_never_fetches_it(
    opened: tuple[RhemaAcpAgent, OrderedClient, str], fake: FakeModelServer
) -> None:
    agent, client, session = opened
    fake.script(
        tool_reply(("grep", {"pattern": "TOKEN", "path": ".env"})),
        tool_reply(("edit_file", {"path": ".env", "old_text": "SENTINEL", "new_text": "X"})),
        text_reply("Done."),
    )
    await agent.prompt(prompt=[text_block("change .env")], session_id=session)
    assert not any(r.endswith(".env") for r in client.reads)
