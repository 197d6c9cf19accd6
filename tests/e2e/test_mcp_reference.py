"""The MCP client against the reference servers nobody here wrote:
``@modelcontextprotocol/server-everything`` (every feature of the protocol)
over stdio and Streamable HTTP, and ``@modelcontextprotocol/server-filesystem``
(from ``tests/mcp_servers``, which ``scripts/install.sh`` installs), through
the hub and the run's resolver as a run uses them."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest

from rhema_lsp.engine import ToolCall, ToolContext
from rhema_lsp.engine.events import ToolStatus
from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.tools import MemoryEditor
from tests.unit.engine.scripted import Reply, ScriptedProvider
from tests.unit.mcp.conftest import Listening, eventually, free_port
from tests.unit.mcp.test_servers import Options, call, inner, tools_for

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "mcp_servers" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = SERVERS / "server-everything" / "dist" / "index.js"
FILESYSTEM = SERVERS / "server-filesystem" / "dist" / "index.js"


def installed(script: Path) -> str:
    assert script.is_file(), f"{script} is missing: run scripts/install.sh (its npm step)"
    return str(script)


def everything_stdio(**extra: object) -> McpServerConfig:
    return McpServerConfig.model_validate(
        {"command": "node", "args": [installed(EVERYTHING), "stdio"], **extra}
    )


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[McpHub]:
    made = McpHub({}, config_path=tmp_path / "config.json", backoff=lambda _n: 0.2)
    yield made
    await made.aclose()


@pytest.fixture
def everything_http() -> Iterator[Listening]:
    port = free_port()
    server = Listening(
        ["node", installed(EVERYTHING), "streamableHttp"],
        port,
        {"PORT": str(port), "PATH": os.environ["PATH"]},
    )
    server.start()
    yield server
    server.stop()


async def test_everything_over_stdio_lists_and_calls(hub: McpHub, tmp_path: Path) -> None:
    editor = MemoryEditor([tmp_path])
    resolver = await tools_for(hub, tmp_path, editor, everything=everything_stdio(allow=["*"]))

    names = {spec.name for spec in resolver.specs()}
    assert {"everything__echo", "everything__get-sum"} <= names
    summed = await call(resolver, "everything__get-sum", {"a": 2, "b": 40})
    assert not summed.is_error and "42" in summed.content


async def test_everything_over_http_recovers_after_a_restart(
    hub: McpHub, tmp_path: Path, everything_http: Listening
) -> None:
    editor = MemoryEditor([tmp_path])
    remote = McpServerConfig(url=f"http://127.0.0.1:{everything_http.port}/mcp", allow=("*",))
    resolver = await tools_for(hub, tmp_path, editor, everything=remote)
    first = await call(resolver, "everything__echo", {"message": "before"})
    assert not first.is_error and "before" in first.content

    everything_http.stop()
    everything_http.start()  # it answers 400 "No valid session ID provided" to the old one

    again = await call(resolver, "everything__echo", {"message": "after"})

    assert not again.is_error, again.content
    assert "after" in again.content
    (report,) = await hub.status(Options({"everything": remote}))
    assert (report.state, report.restarts) == ("ready", 1)


async def test_everything_uses_the_client_capabilities(hub: McpHub, tmp_path: Path) -> None:
    editor = MemoryEditor([tmp_path], answer="Allow")
    provider = ScriptedProvider(Reply(text="sampled words"))
    resolver = await hub.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai",
        Options({"everything": everything_stdio(allow=["*"])}),
        provider=provider, model="model-x",
    )  # fmt: skip

    def names() -> set[str]:
        return {spec.name for spec in resolver.specs()}

    # the tools it registers once it knows our capabilities arrive with tools/list_changed
    wanted = {
        "everything__trigger-sampling-request",
        "everything__trigger-elicitation-request",
        "everything__get-roots-list",
    }
    await eventually(lambda: wanted <= names())
    assert "everything__simulate-research-query" not in names()  # taskSupport: required
    assert {"list_mcp_resources", "read_mcp_resource"} <= names()

    roots = await call(resolver, "everything__get-roots-list", {})
    assert tmp_path.as_uri() in roots.content

    sampled = await call(resolver, "everything__trigger-sampling-request", {"prompt": "hi"})
    assert not sampled.is_error and "sampled words" in sampled.content
    assert "asks to use the model (model-x)" in editor.asked[-1][0]

    # a form with a required free-text field: no editor prompt can take it, so declined
    form = await call(resolver, "everything__trigger-elicitation-request", {})
    assert "decline" in form.content

    seen: list[ToolStatus] = []
    done = await resolver.resolve_streaming(
        ToolCall(id="c2", name="everything__trigger-long-running-operation",
                 args={"duration": 1, "steps": 2}),
        ToolContext(), lambda _chunk: None, seen.append,
    )  # fmt: skip
    assert not done.is_error
    assert seen[-1].activity == "calling trigger-long-running-operation on everything: 2/2"

    links = await call(resolver, "everything__get-resource-links", {"count": 1})
    assert "read_mcp_resource server='everything'" in links.content
    uri = links.content.split("<", 1)[1].split(">", 1)[0]
    read = await call(resolver, "read_mcp_resource", {"server": "everything", "uri": uri})
    assert not read.is_error and read.content.strip()

    prompts = {prompt.name for server, prompt in await hub.prompts(Options(
        {"everything": everything_stdio(allow=["*"])}))}  # fmt: skip
    assert {"simple-prompt", "args-prompt"} <= prompts
    text = await hub.get_prompt("everything", "args-prompt", {"city": "Paris"})
    assert "Paris" in text


async def test_filesystem_without_a_directory_serves_the_roots(hub: McpHub, tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("from the roots\n")
    editor = MemoryEditor([folder])
    filesystem = McpServerConfig(command="node", args=(installed(FILESYSTEM),), allow=("*",))
    resolver = await tools_for(hub, folder, editor, files=filesystem)

    async def allowed() -> str:
        return (await call(resolver, "files__list_allowed_directories", {})).content

    for _ in range(100):  # it asks for the roots once it is initialized
        if str(folder.resolve()) in await allowed():
            break
        await anyio.sleep(0.1)
    listed = await call(resolver, "files__list_directory", {"path": str(folder)})
    assert not listed.is_error, listed.content
    assert "notes.txt" in listed.content
    read = await call(resolver, "files__read_text_file", {"path": str(folder / "notes.txt")})
    assert read.content.strip() == "from the roots"


async def test_everything_over_http_samples_and_lists_roots(
    hub: McpHub, tmp_path: Path, everything_http: Listening
) -> None:
    editor = MemoryEditor([tmp_path], answer="Allow")
    remote = McpServerConfig(url=f"http://127.0.0.1:{everything_http.port}/mcp", allow=("*",))
    resolver = await hub.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai",
        Options({"everything": remote}),
        provider=ScriptedProvider(Reply(text="over http")), model="model-x",
    )  # fmt: skip
    await eventually(lambda: "everything__get-roots-list" in {s.name for s in resolver.specs()})

    roots = await call(resolver, "everything__get-roots-list", {})
    sampled = await call(resolver, "everything__trigger-sampling-request", {"prompt": "hi"})

    assert tmp_path.as_uri() in roots.content
    assert not sampled.is_error and "over http" in sampled.content


@pytest.mark.parametrize("answer", ["Answer", "Deny"])
async def test_everythings_form_is_asked_field_by_field_or_refused(
    hub: McpHub, tmp_path: Path, answer: str
) -> None:
    editor = MemoryEditor([tmp_path])
    editor.asks_text = True
    editor.answers = [answer, "Yes", "Joey", "Wonder Woman", "Dogs", "Send"]  # Send: the review
    editor.texts = [
        "Ada Lovelace",
        "",
        "ada@example.com",
        "",
        "",
        "7",
        "",
        "Piano, drums",
        "Salmon",
    ]
    resolver = await tools_for(hub, tmp_path, editor, everything=everything_stdio(allow=["*"]))
    await eventually(
        lambda: "everything__trigger-elicitation-request" in {s.name for s in resolver.specs()}
    )

    form = await call(resolver, "everything__trigger-elicitation-request", {})

    if answer == "Deny":
        assert "declined" in form.content and editor.text_asked == []
        return
    (review,) = [q for q, _c in editor.asked if q.startswith("Send to the MCP server everything")]
    assert "Ada Lovelace" in review and "ada@example.com" in review  # every answer, before sent
    assert "- Name: Ada Lovelace" in form.content, form.content
    assert "- Agreed to terms: true" in form.content and "- Favorite Integer: 7" in form.content
    assert '"untitledMultipleSelectEnum": [\n      "Piano",\n      "Drums"\n    ]' in form.content
    assert '"titledMultipleSelectEnum": [\n      "fish-2"\n    ]' in form.content
    assert '"legacyTitledEnum": "pet-2"' in form.content
    assert "firstLine" not in form.content  # left empty: not sent
    questions = [question for question, _value in editor.text_asked]
    assert questions[0] == "everything: String — Your full, legal name"
    assert editor.text_asked[5] == (
        "everything: Integer (a whole number) — Your favorite integer (do not give us your "
        "phone number, pin, or other sensitive info)",
        "42",
    )
