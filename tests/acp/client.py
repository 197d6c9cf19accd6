"""A real ACP client for the tests, on the SDK's client side.

:class:`RecordingClient` is an editor as the ACP SDK models one: it holds
buffers (unsaved text, shadowing the disk) that ``fs/read_text_file`` reads
and ``fs/write_text_file`` changes, answers permission requests from a
script, and records every ``session/update`` it receives. :func:`start_agent`
runs ``python -m rhema_lsp acp`` as a child process and connects it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    BooleanConfigOptionCapabilities,
    ClientCapabilities,
    ClientSessionCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    InitializeResponse,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    SessionConfigOptionsCapabilities,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from tests.fakes.model_server import FakeModelServer

REPO = Path(__file__).resolve().parents[2]


@dataclass
class PermissionAsked:
    """One ``session/request_permission`` as the client saw it."""

    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    updates_before: list[ToolCallStart | ToolCallProgress] = field(default_factory=list)
    """The call's updates the client had when it was asked."""


@dataclass
class RecordingClient:
    """The client side (see the module docstring).

    ``answers`` are option ids to pick, in order; ``None`` dismisses (the
    ``cancelled`` outcome). With none left, every request is dismissed.
    ``hold_permission`` makes a request wait until the agent withdraws it.
    """

    buffers: dict[str, str] = field(default_factory=dict)
    answers: list[str | None] = field(default_factory=list)
    hold_permission: bool = False
    updates: list[tuple[str, Any]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    asked: list[PermissionAsked] = field(default_factory=list)
    withdrawn: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    agent_pid: int = 0
    """The agent process's id, once :func:`start_agent` started it."""
    agent_process: asyncio.subprocess.Process | None = None
    """The agent process, once :func:`start_agent` started it."""

    # -- the Client interface ------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.changed.set()

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        text = await asyncio.to_thread(Path(path).read_text)
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        self.writes.append((path, content))
        self.buffers[path] = content  # the editor's buffer, not saved
        return WriteTextFileResponse()

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        before = self.tool_updates(tool_call.tool_call_id)
        self.asked.append(PermissionAsked(tool_call, options, before))
        self.changed.set()
        if self.hold_permission:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.withdrawn += 1
                raise
        choice = self.answers.pop(0) if self.answers else None
        if choice is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    def on_connect(self, conn: Any) -> None:
        return None

    # -- what the tests read -------------------------------------------------

    def of(self, kind: type) -> list[Any]:
        return [update for _, update in self.updates if isinstance(update, kind)]

    def message_text(self) -> str:
        return "".join(
            u.content.text
            for u in self.of(AgentMessageChunk)
            if isinstance(u.content, TextContentBlock)
        )

    def thought_text(self) -> str:
        return "".join(
            u.content.text
            for u in self.of(AgentThoughtChunk)
            if isinstance(u.content, TextContentBlock)
        )

    def tool_updates(self, call_id: str) -> list[ToolCallStart | ToolCallProgress]:
        return [
            u
            for u in self.of(ToolCallStart) + self.of(ToolCallProgress)
            if u.tool_call_id == call_id
        ]

    async def wait_for(self, predicate: Any) -> None:
        async with asyncio.timeout(10):
            while not predicate():
                self.changed.clear()
                await self.changed.wait()


def agent_args(fake: FakeModelServer, *extra: str) -> list[str]:
    return [
        "-m",
        "rhema_lsp",
        "acp",
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


@asynccontextmanager
async def start_agent(
    client: RecordingClient,
    fake: FakeModelServer,
    state: Path,
    *extra: str,
    fs: bool = True,
    terminal: bool = False,
    booleans: bool = False,
    wire: list[dict[str, Any]] | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[tuple[ClientSideConnection, InitializeResponse]]:
    """Run ``python -m rhema_lsp acp`` (``env`` added to its environment) and
    initialize it as an fs-capable client (one taking boolean config options
    with ``booleans``); every raw JSON-RPC message the agent sends lands in
    ``wire``."""

    def record(event: StreamEvent) -> None:
        if wire is not None and event.direction is StreamDirection.INCOMING:
            wire.append(event.message)

    env = {
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "XDG_STATE_HOME": str(state),
        "XDG_CONFIG_HOME": str(state / "config"),  # no user config file of the machine's
        "OPENAI_API_KEY": "",
        **(env or {}),
    }
    log = (state / "agent.log").open("ab")
    try:
        # The SDK's Client protocol lists every optional method (terminals,
        # elicitation); its router serves the ones a client has.
        async with spawn_agent_process(
            cast(Client, client),
            sys.executable,
            *agent_args(fake, *extra),
            env=env,
            transport_kwargs={"stderr": log.fileno()},
            observers=[record],
        ) as (conn, process):
            client.agent_pid = process.pid
            client.agent_process = process
            capabilities = ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
                terminal=terminal,
                session=ClientSessionCapabilities(
                    config_options=SessionConfigOptionsCapabilities(
                        boolean=BooleanConfigOptionCapabilities()
                    )
                )
                if booleans
                else None,
            )
            init = await asyncio.wait_for(
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=capabilities,
                    client_info=Implementation(name="rhema-tests", version="1"),
                ),
                30,
            )
            yield conn, init
    finally:
        log.close()
