"""The contract's other commands, bad arguments, settings and code actions."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply


@pytest.mark.parametrize(
    ("command", "args", "field"),
    [
        ("rhema.turn", {}, "prompt"),
        ("rhema.turn", {"prompt": "x", "maxSteps": 0}, "maxSteps"),
        ("rhema.turn", {"prompt": "x", "mode": "yolo"}, "mode"),
        ("rhema.turn", {"prompt": "x", "colour": "red"}, "colour"),
        ("rhema.turn", {"prompt": "x", "context": [{"range": None}]}, "context.0.uri"),
        ("rhema.openSession", {}, "session"),
        ("rhema.edit", {"uri": "file:///x", "instruction": "y"}, "range"),
        ("rhema.turn", {"prompt": " \n\t"}, "prompt"),
        ("rhema.step", {"prompt": "  "}, "prompt"),
    ],
)
async def test_a_bad_argument_is_invalid_params_naming_the_field(
    client: EditorClient, command: str, args: dict[str, object], field: str
) -> None:
    with pytest.raises(JsonRpcException) as raised:
        await client.command(command, args)
    assert raised.value.code == -32602
    assert f"`{field}`" in str(raised.value)
    if "prompt" in args and str(args["prompt"]).strip() == "":
        assert "must not be blank" in str(raised.value)


async def test_a_folder_outside_the_workspace_is_refused(client: EditorClient) -> None:
    with pytest.raises(JsonRpcException) as raised:
        await client.command("rhema.turn", {"prompt": "x", "folder": "/etc"})
    assert raised.value.code == -32602
    assert "not one of the workspace folders" in str(raised.value)


async def test_an_unknown_session_is_a_clear_error(client: EditorClient) -> None:
    with pytest.raises(JsonRpcException) as raised:
        await client.command("rhema.openSession", {"session": "nope"})
    assert "no session nope" in str(raised.value)


async def test_sessions_list_open_and_delete(
    client: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    fake.script(text_reply("first answer"), text_reply("second answer"))
    first = await client.command("rhema.turn", {"prompt": "First question\nwith detail"})
    again = await client.command("rhema.turn", {"prompt": "Follow-up", "session": first["session"]})
    assert again["session"] == first["session"]
    assert again["turn"] == 2
    # the follow-up saw the whole conversation
    assert [m["role"] for m in fake.requests[1]["messages"] if m["role"] != "system"] == [
        "user",
        "assistant",
        "user",
    ]

    listed = await client.command("rhema.sessions", {})
    assert [(s["session"], s["title"], s["turns"], s["running"]) for s in listed] == [
        (first["session"], "First question", 2, False)
    ]
    assert listed[0]["folder"] == str(workspace)

    opened = await client.command("rhema.openSession", {"session": first["session"]})
    assert opened["resumed"] == {"rerun": [], "interrupted": []}
    texts = [m["content"][0]["text"] for m in opened["messages"]]
    assert texts == ["First question\nwith detail", "first answer", "Follow-up", "second answer"]

    assert (await client.command("rhema.deleteSession", {"session": first["session"]})) == {
        "deleted": True
    }
    assert await client.command("rhema.sessions", {}) == []
    assert (workspace / ".rhema" / ".gitignore").read_text().strip() == "*"


async def test_status_names_the_provider_and_where_it_came_from(
    client: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    status = await client.command("rhema.status", {})
    assert status["provider"]["baseUrl"] == fake.base_url
    assert status["provider"]["model"] == "fake-model"
    assert status["provider"]["source"]
    assert status["folders"] == [str(workspace)]
    assert status["mode"] == "edit"
    assert status["running"] == []


async def test_invalid_settings_are_named_and_defaults_used(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    client = await start_editor(
        "visual_studio_code",
        [workspace],
        settings_for(fake, mode="yolo", maxTokens="lots", apiKey="sk-secret-value"),
        env={"XDG_STATE_HOME": str(tmp_path / "state")},
    )
    try:
        status = await client.command("rhema.status", {})
        assert status["mode"] == "edit"
        shown = [m.message for m in client.messages]
        assert any("rhema.mode" in m for m in shown)
        assert any("rhema.maxTokens" in m for m in shown)
        assert any("rhema.apiKey" in m for m in shown)
        assert not any("sk-secret-value" in m for m in shown)
    finally:
        await client.shutdown_session()


async def test_code_actions_offer_edit_and_explain_on_a_selection(
    client: EditorClient, workspace: Path
) -> None:
    path = workspace / "hello.py"
    client.open(path)
    selection = types.Range(start=types.Position(line=0, character=0), end=types.Position(1, 5))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            range=selection,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert actions is not None
    # pygls' client structures these CodeActions as Commands (a union quirk of
    # its converter): the title survives, the nested command only as text.
    assert [a.title for a in actions] == ["Rhema: edit selection", "Rhema: explain selection"]
    assert "rhema.editSelection" in str(actions[0].command)
    assert "'command': 'rhema.turn'" in str(actions[1].command)
    assert "Explain the selected code." in str(actions[1].command)
    empty = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert not empty


async def test_context_gives_the_model_the_unsaved_selection(
    client: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    path = workspace / "hello.py"
    client.open(path, "alpha\nbeta (unsaved)\ngamma\n")
    fake.script(text_reply("it is beta"))
    await client.command(
        "rhema.turn",
        {
            "prompt": "What is selected?",
            "context": [
                {
                    "uri": path.as_uri(),
                    "range": {
                        "start": {"line": 1, "character": 0},
                        "end": {"line": 1, "character": 4},
                    },
                }
            ],
        },
    )
    sent = fake.requests[0]["messages"][-1]["content"]
    assert sent.startswith("What is selected?")
    assert "alpha\n«selection»beta«/selection» (unsaved)\ngamma" in sent
    assert "hello.py" in sent
