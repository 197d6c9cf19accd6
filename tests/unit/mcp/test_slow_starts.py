"""How long a run waits for its MCP servers: at most the cap the process
sets (``rhema-lsp ask``: 2 s), a server still starting then joining the run
once ready (a call naming its tool waits for it); a server that did not
start while a run waited is remembered in the user state directory, and
the next hub does not wait for it at all; the file of remembered servers
holds no entry's values, and a file that is not ours is ignored."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.starting import REMEMBER_S, SLOW_FILE, SlowStarts, run_wait
from rhema_lsp.tools import MemoryEditor
from rhema_lsp.vocabulary import MCP_RUN_WAIT_ENV
from tests.fakes.mcp_hang import entry as hanging
from tests.fakes.mcp_scripted import entry as scripted
from tests.unit.mcp.test_servers import Options, call, inner

pytestmark = pytest.mark.process  # starts child processes


def _hub(tmp_path: Path, cap: str | None) -> McpHub:
    environ = {MCP_RUN_WAIT_ENV: cap} if cap is not None else {}
    return McpHub(environ, config_path=tmp_path / "config.json", state_dir=tmp_path / "state")


@pytest.fixture
async def capped(tmp_path: Path) -> AsyncIterator[McpHub]:
    made = _hub(tmp_path, "0.3")
    yield made
    await made.aclose()


async def test_a_hung_server_costs_the_cap_then_nothing_once_remembered(
    tmp_path: Path, marks: Path
) -> None:
    config = McpServerConfig.model_validate(hanging(marks, start_timeout=60))
    options = Options({"stuck": config}, mcp_start_timeout=60)
    editor = MemoryEditor([tmp_path])
    first = _hub(tmp_path, "0.3")
    try:
        began = anyio.current_time()
        await first.resolver(inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options)
        assert anyio.current_time() - began < 5  # not the 60 s start bound
    finally:
        await first.aclose()
    stored = (tmp_path / "state" / SLOW_FILE).read_text()
    assert "stuck" not in stored and str(marks) not in stored  # hashes and times only
    assert len(json.loads(stored)) == 1

    second = _hub(tmp_path, None)  # no cap at all: remembered, so not waited for
    try:
        began = anyio.current_time()
        await second.resolver(inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options)
        assert anyio.current_time() - began < 2
    finally:
        await second.aclose()


async def test_a_call_to_a_server_still_starting_waits_for_it(
    capped: McpHub, tmp_path: Path, marks: Path
) -> None:
    config = McpServerConfig.model_validate(
        {**scripted(marks, FAKE_SCRIPT_SLOW_FIRST="1"), "allow": ["*"]}
    )
    editor = MemoryEditor([tmp_path])
    resolver = await capped.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", Options({"s": config})
    )
    assert "s__echo" not in [spec.name for spec in resolver.specs()]  # not ready yet
    with anyio.fail_after(15):
        result = await call(resolver, "s__echo", {"text": "late"})
    assert (result.is_error, result.content) == (False, "echo: late")
    assert "s__echo" in [spec.name for spec in resolver.specs()]  # joins the next request
    unknown = await call(resolver, "t__echo", {"text": "x"})
    assert unknown.is_error


class _Seen:
    """A connection as :class:`SlowStarts` reads one."""

    name = "s"
    config = McpServerConfig(command="x")
    error = None

    def __init__(self, state: str) -> None:
        self.state = type("State", (), {"value": state})()


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[1, 2]", '{"a": "yesterday", "b": null}', '"x"', "{" * 5000],
)
async def test_a_file_that_is_not_ours_is_ignored(tmp_path: Path, text: str) -> None:
    (tmp_path / SLOW_FILE).write_text(text)
    slow = SlowStarts(tmp_path)
    assert not await slow.slow(_Seen("starting"))  # type: ignore[arg-type]
    await slow.note([_Seen("starting")])  # type: ignore[list-item]
    assert len(json.loads((tmp_path / SLOW_FILE).read_text())) == 1  # rewritten, ours


async def test_a_remembered_server_is_forgotten_after_a_while_or_once_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    await SlowStarts(tmp_path).note([_Seen("starting")])  # type: ignore[list-item]
    assert await SlowStarts(tmp_path).slow(_Seen("starting"))  # type: ignore[arg-type]
    later = time.time() + REMEMBER_S + 1
    with monkeypatch.context() as patched:
        patched.setattr("rhema_lsp.mcp.starting.time.time", lambda: later)
        assert not await SlowStarts(tmp_path).slow(_Seen("starting"))  # type: ignore[arg-type]
    await SlowStarts(tmp_path).note([_Seen("ready")])  # type: ignore[list-item]
    assert not await SlowStarts(tmp_path).slow(_Seen("starting"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "cap"), [("2", 2.0), ("0", 0.0), ("-1", None), ("nan", None), ("x", None), ("", None)]
)
def test_the_cap_is_read_from_the_environment(value: str, cap: float | None) -> None:
    assert run_wait({MCP_RUN_WAIT_ENV: value}) == cap
