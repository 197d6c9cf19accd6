"""Capability negotiation, once per recorded editor: who gets events, who gets
the transcript and the closing message, who gets detached turns, who is
offered the client-side ``rhema.editSelection``.

Every client capability set pytest-lsp ships is used (read from its
``clients`` folder, so a new recording joins by itself), plus our own
(``clients/``: eglot 1.9 and lsp-mode 8.0 recorded from Debian's Emacs 28,
vim-lsp and yegappan/lsp written from their sources; see its README). Each
runs twice: as the plain editor, and as our own client inside it, which
declares ``clientCapabilities: {events, editSelection}`` in
``initializationOptions``.

The rules (``rhema_lsp/server/clients.py``): ``rhema/event`` goes only to
clients that declared ``events``. Every other client gets its turns
detached (whatever progress it advertises, and even with a
``workDoneToken``), progress on a token the server creates where it
advertises ``window.workDoneProgress``, the transcript
(``.rhema/transcripts/<session>.md``), a one-paragraph
``window/showMessage`` at turn end, and ``window/showDocument`` of the
transcript, once it holds the answer, where it supports that.
``detach: false`` keeps any request open. ``rhema.editSelection`` is offered
only to clients that declared it; everyone else gets server-side actions.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import client_capabilities

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply

OWN_CLIENTS = Path(__file__).with_name("clients")


def recorded_clients() -> list[str]:
    """``name@vX.Y.Z`` of every recording pytest-lsp ships, and of ours."""
    shipped = resources.files("pytest_lsp") / "clients"
    names = [item.name for item in shipped.iterdir() if item.name.endswith(".json")]
    names += [item.name for item in OWN_CLIENTS.glob("*.json")]
    return sorted(name.removesuffix(".json").replace("_v", "@v") for name in names)


def capabilities_of(editor: str) -> types.ClientCapabilities:
    """The recorded capabilities of ``editor`` (pytest-lsp's, or ours)."""
    name, version = editor.split("@")
    own = OWN_CLIENTS / f"{name}_{version}.json"
    if own.exists():
        data = json.loads(own.read_text(encoding="utf-8"))
        recorded: types.ClientCapabilities = default_converter().structure(
            data["capabilities"], types.ClientCapabilities
        )
        return recorded
    return client_capabilities(editor)


def has_progress(capabilities: types.ClientCapabilities) -> bool:
    return bool(capabilities.window and capabilities.window.work_done_progress)


def has_show_document(capabilities: types.ClientCapabilities) -> bool:
    window = capabilities.window
    return bool(window and window.show_document and window.show_document.support)


DECLARED = {"plain": None, "rhema-client": {"events": True, "editSelection": True}}

ANSWER = "greet says hello to name.\nThat is all it does."


async def started(
    editor: str,
    declared: dict[str, bool] | None,
    workspace: Path,
    fake: FakeModelServer,
    tmp_path: Path,
    **settings: object,
) -> EditorClient:
    rhema = settings_for(fake, mode="edit", **settings)
    options = dict(rhema)
    if declared is not None:
        options["clientCapabilities"] = declared
    return await start_editor(
        editor,
        [workspace],
        rhema,
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
        capabilities=capabilities_of(editor),
        initialization_options=options,
    )


async def until(what: str, condition: Callable[[], object]) -> None:
    """Wait (a guard of 30 s) until ``condition()`` holds (pytest-lsp records
    messages and shown documents in lists, with nothing to await)."""
    for _ in range(1500):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def transcript_of(workspace: Path, session: str) -> Path:
    return workspace / ".rhema" / "transcripts" / f"{session}.md"


@pytest.mark.parametrize("declared", DECLARED.values(), ids=DECLARED.keys())
@pytest.mark.parametrize("editor", recorded_clients())
async def test_a_turn_reaches_each_client_the_way_it_can_show_it(
    editor: str,
    declared: dict[str, bool] | None,
    workspace: Path,
    fake: FakeModelServer,
    tmp_path: Path,
) -> None:
    capabilities = capabilities_of(editor)
    renders_events = declared is not None
    client = await started(editor, declared, workspace, fake, tmp_path)
    try:
        client.open(workspace / "hello.py")
        fake.script(text_reply(ANSWER, thinking="Look at greet."))

        result = await client.command("rhema.turn", {"prompt": "What does greet do?"})

        session = result["session"]
        transcript = transcript_of(workspace, session)
        if renders_events:
            # Our own clients: the request stays open, the events tell the rest.
            assert result["text"] == ANSWER
            assert result["stopReason"] == "end_turn"
            end = await client.wait_for_event("turn_end")
            assert end["text"] == ANSWER
            await client.command("rhema.status")  # anything still on its way has arrived
            assert not transcript.exists()
            assert not [m for m in client.messages if "greet says hello" in m.message]
            assert client.shown_documents == []
            return
        # Everyone else: detached, no rhema/event, the transcript, a closing
        # message, and the transcript opened (without focus) once it holds the
        # answer, where the client can open documents.
        assert result == {"session": session, "turn": 1, "started": True}
        await until("the closing message", lambda: closing(client))
        message = closing(client)
        assert message is not None
        assert message.type == types.MessageType.Info
        assert "\n" not in message.message
        assert message.message.startswith("Rhema: greet says hello to name. That is all it does.")
        assert "(end turn)" in message.message  # the stop reason
        assert message.message.endswith(f"Transcript: {transcript}")
        text = transcript.read_text(encoding="utf-8")
        assert "What does greet do?" in text
        assert "Look at greet." in text
        assert ANSWER in text
        if has_show_document(capabilities):
            await until("the transcript to be shown", lambda: client.shown_documents)
            [shown] = client.shown_documents
            assert shown.uri == transcript.as_uri()
            assert not shown.take_focus
            [held] = client.state.shown_texts
            assert held is not None and ANSWER in held
        if has_progress(capabilities):
            await until("the progress to end", lambda: ended(client))
            [token] = client.progress_reports
            assert str(token).startswith("rhema-")  # created by the server
            kinds = progress_kinds(client, token)
            assert kinds[0] == "begin" and kinds[-1] == "end"
        else:
            assert client.progress_reports == {}
        await client.command("rhema.status")  # anything still on its way has arrived
        assert client.state.events == []
        if not has_show_document(capabilities):
            assert client.shown_documents == []
    finally:
        await client.shutdown_session()


def progress_kinds(client: EditorClient, token: int | str) -> list[str]:
    """The kinds of the progress values on ``token`` (pytest-lsp keeps the
    values, though it types them as the notifications)."""
    return [getattr(value, "kind", "") for value in client.progress_reports.get(token, [])]


def ended(client: EditorClient) -> bool:
    return any(progress_kinds(client, token)[-1:] == ["end"] for token in client.progress_reports)


def closing(client: EditorClient) -> types.ShowMessageParams | None:
    found = [m for m in client.messages if "greet says hello" in m.message]
    return found[-1] if found else None


@pytest.mark.parametrize("declared", DECLARED.values(), ids=DECLARED.keys())
@pytest.mark.parametrize("editor", recorded_clients())
async def test_code_actions_offer_edit_selection_only_to_clients_that_declared_it(
    editor: str,
    declared: dict[str, bool] | None,
    workspace: Path,
    fake: FakeModelServer,
    tmp_path: Path,
) -> None:
    path = workspace / "hello.py"
    client = await started(editor, declared, workspace, fake, tmp_path)
    try:
        client.open(path)
        diagnostic = types.Diagnostic(
            range=types.Range(start=types.Position(1, 4), end=types.Position(1, 10)),
            message="something is off here",
            severity=types.DiagnosticSeverity.Warning,
            code="W1",
            source="lint",
        )
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
                range=types.Range(start=types.Position(0, 0), end=types.Position(2, 0)),
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        titles = [action.title for action in actions or []]
        # pygls' client structures CodeActions as Commands (see test_commands):
        # the nested command survives as text.
        commands = " ".join(str(action.command) for action in actions or [])
        if declared is not None:
            assert "rhema.editSelection" in commands
        else:
            assert "rhema.editSelection" not in commands
            assert {"Rhema: add docstrings", "Rhema: simplify", "Rhema: explain"} <= set(titles)
            assert "Rhema: fix this" in titles
            assert "something is off here" in commands
    finally:
        await client.shutdown_session()


@pytest.mark.parametrize(
    ("editor", "args", "token", "detached"),
    [
        # Detached unless asked not to: a workDoneToken or advertised progress
        # do not mean the client waits (lsp-mode gives up after 10 s).
        ("eglot@v1.9", {}, "token-1", True),
        ("eglot@v1.9", {"detach": False}, None, False),
        ("eglot@v1.9", {"detach": True}, None, True),
        ("lsp-mode@v8.0.0", {}, "token-2", True),
        ("lsp-mode@v8.0.0", {"detach": False}, "token-2", False),
        ("visual_studio_code@v1.65.2", {}, None, True),
        ("neovim@v0.11.0", {"detach": False}, None, False),
    ],
    ids=[
        "eglot-token",
        "eglot-detach-false",
        "eglot-detach-true",
        "lsp-mode-token",
        "lsp-mode-detach-false",
        "vscode",
        "neovim-detach-false",
    ],
)
async def test_detach_follows_the_argument_not_the_work_done_token(
    editor: str,
    args: dict[str, Any],
    token: str | None,
    detached: bool,
    workspace: Path,
    fake: FakeModelServer,
    tmp_path: Path,
) -> None:
    client = await started(editor, None, workspace, fake, tmp_path)
    try:
        fake.script(text_reply(ANSWER))
        if token is not None:
            client.progress_reports[token] = []  # the client made the token for its request
        result: Any = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="rhema.turn",
                arguments=[{"prompt": "What does greet do?", **args}],
                work_done_token=token,
            )
        )
        await until("the closing message", lambda: closing(client))
        if detached:
            assert result == {"session": result["session"], "turn": 1, "started": True}
            # The request's token died with its answer: nothing is reported on it.
            assert token is None or progress_kinds(client, token) == []
        else:
            assert result["text"] == ANSWER
            if token is not None:
                kinds = progress_kinds(client, token)
                assert kinds[0] == "begin" and kinds[-1] == "end"
        assert client.state.events == []
    finally:
        await client.shutdown_session()


async def test_rhema_cancel_stops_a_detached_turn(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    client = await started("eglot@v1.9", None, workspace, fake, tmp_path)
    try:
        fake.script(text_reply("x" * 200, delay=0.1))
        result = await client.command("rhema.turn", {"prompt": "Write a lot."})
        assert result["started"] is True
        transcript = transcript_of(workspace, result["session"])
        await until("the answer to start", lambda: "xx" in read_or_empty(transcript))

        cancelled = await client.command("rhema.cancel", {"session": result["session"]})

        assert cancelled["cancelled"] == [result["session"]]
        await until(
            "the closing message",
            lambda: [m for m in client.messages if "(cancelled)" in m.message],
        )
    finally:
        await client.shutdown_session()


def read_or_empty(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""
