"""The client capabilities real servers use, against the SDK-written fake
over stdio: roots, ``tools/list_changed``, progress, resources, prompts,
sampling (through the session's provider, each request approved),
elicitation (a form asked question by question), the server's instructions
and its log (at its own level: ``info`` shows at ``logLevel`` info, ``debug``
does not)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.engine import (
    Agent,
    ChatParams,
    Session,
    ToolCall,
    ToolContext,
    ToolResolver,
    ToolResult,
)
from rhema_lsp.engine.events import ToolStatus
from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.mcp.resolver import mcp_instructions
from rhema_lsp.tools import MemoryEditor
from tests.unit.engine.scripted import Recorder, Reply, ScriptedProvider
from tests.unit.engine.scripted import call as scripted_call
from tests.unit.mcp.conftest import eventually, fake_stdio
from tests.unit.mcp.test_servers import Options, call, inner

pytestmark = pytest.mark.process  # starts child processes


async def run_with(
    hub: McpHub,
    folder: Path,
    editor: MemoryEditor,
    provider: ScriptedProvider | None = None,
    **servers: McpServerConfig,
) -> ToolResolver:
    return await hub.resolver(
        inner(folder, editor),
        "agent",
        folder,
        editor,
        "openai",
        Options(servers),
        provider=provider,
        model="model-x",
    )


async def test_roots_are_the_workspace_folders(hub: McpHub, tmp_path: Path, marks: Path) -> None:
    editor = MemoryEditor([tmp_path])
    resolver = await run_with(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["*"]))
    assert (await call(resolver, "fake__roots", {})).content == tmp_path.as_uri()


async def test_a_changed_tool_list_is_in_the_next_request(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    resolver = await run_with(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["*"]))
    assert "fake__grown" not in [spec.name for spec in resolver.specs()]

    assert (await call(resolver, "fake__grow", {})).content == "grown"

    await eventually(lambda: "fake__grown" in [spec.name for spec in resolver.specs()])
    assert (await call(resolver, "fake__grown", {})).content == "the new tool answered"


async def test_progress_is_the_calls_status(hub: McpHub, tmp_path: Path, marks: Path) -> None:
    editor = MemoryEditor([tmp_path])
    resolver = await run_with(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["*"]))
    seen: list[ToolStatus] = []
    result = await resolver.resolve_streaming(
        ToolCall(id="c1", name="fake__steps", args={"count": 3}),
        ToolContext(),
        lambda _chunk: None,
        seen.append,
    )
    assert result.content == "3 steps done"
    activities = [status.activity for status in seen]
    assert activities[0] == "calling steps on fake"
    assert "calling steps on fake: step 3 (3/3)" in activities


async def test_resources_are_listed_read_and_followed(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    resolver = await run_with(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["*"]))
    names = [spec.name for spec in resolver.specs()]
    assert {"list_mcp_resources", "read_mcp_resource"} <= set(names)

    listed = await call(resolver, "list_mcp_resources", {})
    assert "fake: fake://notes/readme — readme: The notes' readme." in listed.content
    read = await call(
        resolver, "read_mcp_resource", {"server": "fake", "uri": "fake://notes/readme"}
    )
    assert (read.is_error, read.content) == (False, "the readme of the notes: read me first")
    missing = await call(resolver, "read_mcp_resource", {"server": "nope", "uri": "x://y"})
    assert missing.is_error and "no MCP server 'nope'" in missing.content
    linked = await call(resolver, "fake__picture", {})
    assert "read_mcp_resource server='fake' reads it" in linked.content
    assert editor.asked == []  # reading asks nothing


async def test_prompts_are_listed_and_filled(hub: McpHub, tmp_path: Path, marks: Path) -> None:
    options = Options({"fake": fake_stdio(marks)})
    [(server, prompt)] = await hub.prompts(options)
    assert (server, prompt.name, prompt.description) == (
        "fake",
        "review",
        "Asks for a review of one file.",
    )
    assert [(a.name, a.required) for a in prompt.arguments] == [("path", True), ("focus", False)]
    text = await hub.get_prompt("fake", "review", {"path": "a.py"})
    assert text == "Review a.py, looking for bugs."


@pytest.mark.parametrize(("answer", "expected"), [
    ("Allow", "the model said: Paris (model-x)"),
    ("Deny", "sampling refused: the user rejected the request (-1)"),
])  # fmt: skip
async def test_sampling_goes_to_the_sessions_model_once_approved(
    hub: McpHub, tmp_path: Path, marks: Path, answer: str, expected: str
) -> None:
    editor = MemoryEditor([tmp_path], answer=answer)
    provider = ScriptedProvider(Reply(text="Paris"))
    resolver = await run_with(hub, tmp_path, editor, provider, fake=fake_stdio(marks, allow=["*"]))

    result = await call(resolver, "fake__ask_model", {"question": "Capital of France?"})

    assert result.content == expected
    [(question, choices)] = editor.asked
    assert "The MCP server fake asks to use the model (model-x)" in question
    assert "Capital of France?" in question and choices == ("Deny", "Allow")
    if answer == "Allow":
        [request] = provider.requests
        assert request.system == "Answer in one word."
        assert request.messages[0].text == "Capital of France?" and request.tools == []
        assert request.params.max_tokens == 50 and request.params.model == "model-x"
    else:
        assert provider.requests == []


@pytest.mark.parametrize(("answers", "expected"), [
    (["Answer", "Yes", "large", "thick", "Send"], "ordered: confirm=True size=large crust=thick"),
    (["Answer", "No", "small", "Skip", "Send"],
     "ordered: confirm=False size=small crust=(left out)"),
    (["Answer", "Yes", "large", "thick", "Deny"], "no order: decline"),  # declined on review
    (["Answer", "Yes", "large", "thick", None], "no order: cancel"),  # the review dismissed
    (["Deny"], "no order: decline"),
    (["Answer", "No", "Cancel"], "no order: cancel"),
])  # fmt: skip
async def test_a_form_elicitation_is_asked_field_by_field(
    hub: McpHub, tmp_path: Path, marks: Path, answers: list[Any], expected: str
) -> None:
    editor = MemoryEditor([tmp_path])
    editor.answers = list(answers)
    resolver = await run_with(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["*"]))

    result = await call(resolver, "fake__order", {})

    assert result.content == expected
    first = editor.asked[0]
    assert first == (
        "The MCP server fake asks: Confirm the pizza order (3 question(s))",
        ("Deny", "Answer"),
    )
    if len(editor.asked) > 2:  # the required fields offer no skip, the optional one does
        assert editor.asked[1][1] == ("Yes", "No", "Cancel")
        assert editor.asked[2][1] == ("small", "large", "Cancel")
    if len(editor.asked) > 3:
        assert editor.asked[3] == ("fake: Crust", ("thin", "thick", "Skip", "Cancel"))
    if len(editor.asked) > 4:  # the review: every answer shown before it is sent
        crust = "thick" if answers[3] == "thick" else "(left out)"
        size, confirm = answers[2], "yes" if answers[1] == "Yes" else "no"
        assert editor.asked[4] == (
            "Send to the MCP server fake (Confirm the pizza order): "
            f"Confirm: {confirm}; Size: {size}; Crust: {crust}",
            ("Deny", "Send"),
        )


@pytest.mark.parametrize(("texts", "expected"), [
    (["Ada", "36", ""], "member: Ada, 36, blue"),  # the optional field left empty
    (["Ada", "old", "36", "red"], "member: Ada, 36, red"),  # not a number: asked again
    (["Ada", None], "no member: cancel"),  # dismissed
])  # fmt: skip
async def test_free_text_fields_are_asked_as_text_by_an_editor_that_can(
    hub: McpHub, tmp_path: Path, marks: Path, texts: list[str | None], expected: str
) -> None:
    editor = MemoryEditor([tmp_path])
    editor.answers = ["Answer", "Send"]
    editor.asks_text = True
    editor.texts = list(texts)
    resolver = await run_with(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["*"]))

    result = await call(resolver, "fake__sign_up", {})

    assert result.content == expected
    assert editor.asked[0] == (
        "The MCP server fake asks: Sign up for the club (3 question(s))",
        ("Deny", "Answer"),
    )
    asked = editor.text_asked
    assert asked[0] == ("fake: Name", "") and asked[1] == ("fake: Age (a whole number)", "")
    if len(asked) > 3:
        assert asked[2] == ("fake: Age (a whole number): 'old' is not one", "old")
        assert asked[3] == ("fake: Team", "blue")  # the default filled in


async def test_free_text_fields_decline_the_form_where_no_text_can_be_asked(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path], answer="Answer")
    resolver = await run_with(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["*"]))

    result = await call(resolver, "fake__sign_up", {})

    assert result.content == "no member: decline"
    assert editor.asked == [] and editor.text_asked == []


async def test_the_servers_instructions_join_the_system_prompt(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    told = fake_stdio(marks)
    told.env["FAKE_MCP_INSTRUCTIONS"] = "Always echo twice. " + "x" * 5000
    resolver = await run_with(hub, tmp_path, editor, fake=told)

    text = mcp_instructions(resolver)

    assert "Instructions from the MCP server fake (the server's own words" in text
    assert "Always echo twice." in text and text.endswith("[... cut off]")
    assert len(text) < 2300
    assert mcp_instructions(inner(tmp_path, editor)) == ""


async def test_the_servers_log_reaches_the_log_at_info(
    hub: McpHub, tmp_path: Path, marks: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="rhema_lsp.mcp.server")
    editor = MemoryEditor([tmp_path])
    resolver = await run_with(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["*"]))

    result: ToolResult = await call(resolver, "fake__chatty", {})

    assert result.content == "logged"
    await eventually(lambda: "chatty at debug" in caplog.text)
    levels = {r.getMessage(): r.levelno for r in caplog.records if "chatty" in r.getMessage()}
    assert levels == {
        "[fake] chatty says hello at info": logging.INFO,  # shown at logLevel info
        "[fake] chatty at debug, which the client did not ask for": logging.DEBUG,
    }


async def test_the_mcp_calls_of_one_step_run_at_once_in_order(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    resolver = await run_with(hub, tmp_path, editor, fake=fake_stdio(marks, allow=["*"]))
    provider = ScriptedProvider(
        Reply(calls=[scripted_call("1", "fake__meet"), scripted_call("2", "fake__meet"),
                     scripted_call("3", "fake__echo", text="after")]),
    )  # fmt: skip
    agent = Agent(provider, resolver=resolver, params=ChatParams(model="m"))
    session = Session()

    await agent.step(session, Recorder(), ToolContext())

    recorded = [
        (part.id, part.content) for message in session.history for part in message.tool_results
    ]
    assert recorded == [("1", "met"), ("2", "met"), ("3", "echo: after")]
