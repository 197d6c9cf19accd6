"""MCP 2026-07-28 beside the handshake era, against the scripted server of
``tests.fakes.mcp_modern`` (no SDK) over stdio and Streamable HTTP: a
2026-07-28-only server serves its tools, sampling, elicitation and roots
through Multi Round-Trip Requests and its list changes through
``subscriptions/listen``, with no ``initialize`` and no session; its cache
hints are honoured; a 2025-06-18 server gets the one ``server/discover``
probe, then ``initialize`` at once (-32601 or HTTP 400), and on a restart
``initialize`` alone. Hostile: malformed discover answers fall back to
``initialize``; a version nobody speaks fails for good, naming the
versions; a server that claims 2026-07-28 and then wants ``initialize`` is
opened with ``initialize`` next time. The SDK's own server
(``tests.fakes.mcp_server``, its resolvers) asks the same in 2026-07-28."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import session

from rhema_lsp.engine import ToolResolver
from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.connection import McpConnection
from rhema_lsp.mcp.errors import McpCallFailed, McpUnavailable
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.states import ServerState
from rhema_lsp.tools import MemoryEditor
from tests.fakes.mcp_modern import entry, methods
from tests.unit.engine.scripted import Reply, ScriptedProvider
from tests.unit.mcp.conftest import ROOT, Listening, eventually, fake_stdio, free_port
from tests.unit.mcp.test_servers import Options, call, inner

pytestmark = pytest.mark.process  # starts child processes

BOUND_S = 5.0
"""How long a start may take here: over the probe's bound (2 s), which a
silent or garbled probe answer costs, and under the 60 s the tests of an
immediate fallback set it to."""


@pytest.fixture
async def quick(tmp_path: Path) -> AsyncIterator[McpHub]:
    """A hub whose restarts come after a twentieth of a second."""
    made = McpHub({}, config_path=tmp_path / "config.json", backoff=lambda _n: 0.05)
    yield made
    await made.aclose()


class Served:
    """One scripted server's entry, over stdio or HTTP (started here)."""

    def __init__(self, transport: str, marks: Path, **env: str) -> None:
        self.http: Listening | None = None
        if transport == "stdio":
            self.config = McpServerConfig.model_validate(entry(marks, **env))
            return
        port = free_port()
        command = [sys.executable, "-m", "tests.fakes.mcp_modern", "http", str(port)]
        self.http = Listening(command, port, {"FAKE_MODERN_MARKS": str(marks), **env})
        self.http.start()
        url = f"http://127.0.0.1:{port}/mcp"
        self.config = McpServerConfig.model_validate({"url": url, "allow": ["*"]})

    def stop(self) -> None:
        if self.http is not None:
            self.http.stop()


@pytest.fixture
def serve(marks: Path) -> Iterator[Any]:
    made: list[Served] = []

    def start(transport: str, **env: str) -> McpServerConfig:
        made.append(Served(transport, marks, **env))
        return made[-1].config

    yield start
    for served in made:
        served.stop()


async def run_with(
    hub: McpHub, folder: Path, editor: MemoryEditor, provider: ScriptedProvider | None = None,
    **servers: McpServerConfig,
) -> ToolResolver:  # fmt: skip
    return await hub.resolver(
        inner(folder, editor), "agent", folder, editor, "openai", Options(servers),
        provider=provider, model="model-x",
    )  # fmt: skip


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_2026_only_server_serves_tools_and_asks_through_round_trips(
    quick: McpHub, tmp_path: Path, marks: Path, serve: Any, transport: str
) -> None:
    editor = MemoryEditor([tmp_path], answer="Allow")
    provider = ScriptedProvider(Reply(text="Paris"))
    config = serve(transport)
    resolver = await run_with(quick, tmp_path, editor, provider, m=config)

    assert (await call(resolver, "m__echo", {"text": "hi"})).content == "hi"
    asked = await call(resolver, "m__ask_model", {"question": "Capital of France?"})
    assert asked.content == "the model said: Paris"
    assert provider.requests[0].messages[0].text == "Capital of France?"
    assert "asks to use the model" in editor.asked[0][0]  # approved first, as ever
    editor.answers = ["Answer", "large", "Send"]  # the review: Send
    assert (await call(resolver, "m__order", {})).content == "ordered: large"
    editor.answers = ["Deny"]
    assert (await call(resolver, "m__order", {})).content == "no order: decline"
    assert (await call(resolver, "m__roots", {})).content == tmp_path.as_uri()

    # list changes come through subscriptions/listen
    await eventually(lambda: "subscriptions/listen" in methods(marks))
    assert (await call(resolver, "m__grow", {})).content == "grown"
    await eventually(lambda: "m__grown" in [spec.name for spec in resolver.specs()])
    assert (await call(resolver, "m__grown", {})).content == "the new tool answered"

    seen = methods(marks)
    assert seen[0] == "server/discover" and "initialize" not in seen
    assert not [m for m in seen if m.startswith("notifications/")]  # none in 2026-07-28
    assert seen.count("server/discover") == 1


async def test_cache_hints_keep_a_fresh_list_from_being_asked_for_again(
    quick: McpHub, tmp_path: Path, marks: Path, serve: Any
) -> None:
    editor = MemoryEditor([tmp_path])
    config = serve("stdio", FAKE_MODERN_TTL="600000", FAKE_MODERN_LISTEN="0")
    await run_with(quick, tmp_path, editor, m=config)
    assert methods(marks).count("tools/list") == 1
    assert methods(marks).count("prompts/list") == 1

    await run_with(quick, tmp_path, editor, m=config)  # the next run takes it up

    # the stale prompts (ttlMs 0) are asked for again, after the fresh tools
    await eventually(lambda: methods(marks).count("prompts/list") == 2)
    assert methods(marks).count("tools/list") == 1
    assert "subscriptions/listen" not in methods(marks)  # no listChanged declared


async def ready(connection: McpConnection) -> None:
    with anyio.fail_after(BOUND_S):
        while connection.state is not ServerState.READY:
            connection.start()
            await connection.wait_started()
            if connection.state is not ServerState.READY:  # type: ignore[comparison-overlap]
                await anyio.sleep(0.05)  # the back-off of a test connection


def connection(config: McpServerConfig) -> McpConnection:
    return McpConnection("m", config, environ={}, start_timeout=BOUND_S, backoff=lambda _n: 0.05)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_old_server_gets_initialize_at_once_after_the_probe_and_alone_after(
    marks: Path, serve: Any, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session, "DISCOVER_TIMEOUT_SECONDS", 60.0)  # a wait for it fails
    server = connection(serve(transport, FAKE_MODERN_MODE="legacy"))
    try:
        await ready(server)  # -32601 (stdio) or a plain 400 (HTTP): no wait for the bound
        assert methods(marks) == [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list",
        ]
        before = server.restarts

        assert (await server.call("echo", {"text": "hi"}, 10)).is_error is False
        if transport == "stdio":
            with pytest.raises(McpUnavailable):
                await server.call("crash", {}, 10)
            await eventually(lambda: server.restarts > before)
            await ready(server)
            # what it spoke is remembered: nothing precedes initialize
            assert methods(marks)[6:] == ["initialize", "notifications/initialized", "tools/list"]
    finally:
        await server.aclose()


@pytest.mark.parametrize("mode", ["garbled", "unversioned", "old"])
async def test_a_malformed_discover_answer_falls_back_to_initialize(
    marks: Path, serve: Any, mode: str
) -> None:
    # an answer that is no JSON-RPC response (garbled) is not an answer: it
    # costs the probe's bound; the others fall back at once
    server = connection(serve("stdio", FAKE_MODERN_MODE=mode))
    try:
        await ready(server)
        # nothing before initialize but the probe; after it, the SDK's notice and
        # the tools' listing in either order (the notice is sent by a task of its own)
        seen = methods(marks)
        assert seen[:2] == ["server/discover", "initialize"]
        assert sorted(seen[2:]) == ["notifications/initialized", "tools/list"]
        assert (await server.call("echo", {"text": "hi"}, 10)).is_error is False
    finally:
        await server.aclose()


@pytest.mark.parametrize("transport", ["stdio", "http"])  # HTTP: a 400 with a modern error
async def test_a_server_naming_only_unknown_versions_fails_for_good(
    marks: Path, serve: Any, transport: str
) -> None:
    server = connection(serve(transport, FAKE_MODERN_MODE="foreign"))
    try:
        server.start()
        with anyio.fail_after(BOUND_S):
            await server.wait_started()
        assert server.state is ServerState.FAILED
        assert "supports no protocol version this client speaks" in (server.error or "")
        assert "2099-01-01" in (server.error or "")
        assert methods(marks) == ["server/discover"]  # not tried again
    finally:
        await server.aclose()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_server_that_claims_2026_but_wants_initialize_gets_it_next(
    marks: Path, serve: Any, transport: str
) -> None:
    server = connection(serve(transport, FAKE_MODERN_MODE="claims"))
    try:
        await ready(server)
        assert methods(marks) == [
            "server/discover", "tools/list",  # claimed 2026-07-28, refused as a 2025 server
            "initialize", "notifications/initialized", "tools/list",  # opened as what it speaks
        ]  # fmt: skip
        assert (await server.call("echo", {"text": "hi"}, 10)).is_error is False
    finally:
        await server.aclose()


async def test_the_sdks_server_asks_through_round_trips_in_2026(
    quick: McpHub, tmp_path: Path, marks: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="rhema_lsp.mcp.modern.era")
    editor = MemoryEditor([tmp_path], answer="Allow")
    provider = ScriptedProvider(Reply(text="Paris"))
    env = {"FAKE_MCP_MARKS": str(marks), "PYTHONPATH": str(ROOT), "FAKE_MCP_ERA": "modern"}
    config = fake_stdio(marks, allow=["*"], env=env)
    resolver = await run_with(quick, tmp_path, editor, provider, fake=config)
    assert "MCP server fake speaks 2026-07-28" in caplog.text

    asked = await call(resolver, "fake__resolved_model", {"question": "Capital of France?"})
    assert asked.content == "the model said: Paris"
    editor.answers = ["Answer", "Yes", "large", "thick", "Send"]
    assert (await call(resolver, "fake__resolved_order", {})).content == "ordered: size=large"
    assert (await call(resolver, "fake__resolved_roots", {})).content == tmp_path.as_uri()


async def test_a_refused_listen_or_endless_questions_never_sink_the_server(
    quick: McpHub, tmp_path: Path, marks: Path, serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="rhema_lsp.mcp")
    editor = MemoryEditor([tmp_path])
    config = serve("stdio", FAKE_MODERN_LISTEN="refuse")
    resolver = await run_with(quick, tmp_path, editor, m=config)

    await eventually(lambda: "subscriptions/listen failed" in caplog.text)
    assert (await call(resolver, "m__echo", {"text": "still here"})).content == "still here"
    pestered = await call(resolver, "m__pester", {})
    assert pestered.is_error and "kept asking for input" in pestered.content
    assert methods(marks).count("tools/call") == 1 + 11  # echo; pester, retried 10 times
    assert (await call(resolver, "m__echo", {"text": "and here"})).content == "and here"


async def test_an_unknown_method_over_http_is_refused_not_a_lost_session(
    marks: Path, serve: Any
) -> None:
    server = connection(serve("http"))
    try:
        await ready(server)
        with pytest.raises(McpCallFailed, match="refused the read of the resource"):
            await server.read_resource("x://y", 10)  # 404 with -32601, as the spec says
        assert server.restarts == 0 and methods(marks).count("tools/list") == 1
    finally:
        await server.aclose()
