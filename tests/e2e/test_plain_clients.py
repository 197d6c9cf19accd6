"""A client with no rhema plugin that advertises ``window.workDoneProgress``
(lsp-mode, vim-lsp, yegappan/lsp, Helix…) runs a 12 s turn the way issue 31
asks: the command answers at once (detached; such a client's request would
time out at 10 s), progress is reported on a token the server creates, no
``rhema/event`` reaches it, and ``window/showDocument`` opens the transcript
only once the transcript holds the answer, followed by a one-line closing
message naming it. A client that never answers the server's
``window/workDoneProgress/create`` (lsp-mode drops it now and then) still
gets its turn run and ended (issue 42).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.e2e.test_clients import capabilities_of, progress_kinds, started, transcript_of, until
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

ANSWER = "Much later: ok"
"""24 characters, one every half second: the model takes about 12 s."""

PROGRESS_ONLY = types.ClientCapabilities(
    window=types.WindowClientCapabilities(
        work_done_progress=True, show_document=types.ShowDocumentClientCapabilities(support=True)
    ),
    workspace=types.WorkspaceClientCapabilities(apply_edit=True, configuration=True),
)


async def test_a_long_turn_answers_at_once_and_shows_the_finished_transcript(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    rhema = settings_for(fake, mode="ask")
    client = await start_editor(
        "progress-only",
        [workspace],
        rhema,
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
        capabilities=PROGRESS_ONLY,
        initialization_options=rhema,  # no clientCapabilities: nothing declared
    )
    try:
        # The model writes one character, then holds the rest until released.
        fake.script(text_reply(ANSWER, chunk=1, hold=2))

        result = await client.command("rhema.turn", {"prompt": "Take your time."})

        # Detached: the command answered while the model was still writing.
        assert result == {"session": result["session"], "turn": 1, "started": True}
        await until("the model to hold its answer", fake.holding.is_set)
        assert not [m for m in client.messages if ANSWER in m.message]
        fake.release()
        transcript = transcript_of(workspace, result["session"])

        await until(
            "the closing message", lambda: [m for m in client.messages if ANSWER in m.message]
        )
        # The transcript was opened once, after its final write: it held the answer.
        [shown] = client.shown_documents
        assert shown.uri == transcript.as_uri()
        assert not shown.take_focus
        [held] = client.state.shown_texts
        assert held is not None and ANSWER in held and "Take your time." in held
        [message] = [m for m in client.messages if ANSWER in m.message]
        assert message.message == f"Rhema: {ANSWER} (end turn). Transcript: {transcript}"
        # Progress on the server's own token, from begin to end.
        [token] = client.progress_reports
        assert str(token).startswith("rhema-")
        kinds = progress_kinds(client, token)
        assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
        # No custom notification ever reached it.
        await client.command("rhema.status")
        assert client.state.events == []
    finally:
        await client.shutdown_session()


async def test_a_turn_whose_progress_token_is_never_created_runs_and_ends(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    rhema = settings_for(fake, mode="ask")
    answered = asyncio.Event()  # the create is answered only after the test
    created: list[int | str] = []
    progress: list[tuple[int | str, str]] = []  # (token, kind)

    async def create(ls: EditorClient, params: types.WorkDoneProgressCreateParams) -> None:
        created.append(params.token)
        await answered.wait()

    def report(ls: EditorClient, params: types.ProgressParams) -> None:
        value = params.value if isinstance(params.value, dict) else {}
        progress.append((params.token, str(value.get("kind"))))

    features: dict[str, Any] = {
        types.WINDOW_WORK_DONE_PROGRESS_CREATE: create,
        types.PROGRESS: report,
    }
    client = await start_editor(
        "progress-only",
        [workspace],
        rhema,
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
        capabilities=PROGRESS_ONLY,
        initialization_options=rhema,
        features=features,
    )
    try:
        fake.script(text_reply("It greets by name."))
        result = await client.command("rhema.turn", {"prompt": "What does greet do?"})
        assert result == {"session": result["session"], "turn": 1, "started": True}
        transcript = transcript_of(workspace, result["session"])

        await until(
            "the closing message", lambda: [m for m in client.messages if "greets" in m.message]
        )
        [message] = [m for m in client.messages if "greets" in m.message]
        assert message.message == f"Rhema: It greets by name. (end turn). Transcript: {transcript}"
        [shown] = client.shown_documents
        assert shown.uri == transcript.as_uri()
        assert "It greets by name." in transcript.read_text()
        # Once the client answers (late), the next turn's progress is as ever;
        # nothing was ever sent on the first turn's token.
        answered.set()
        fake.script(text_reply("Again."))
        again = await client.command(
            "rhema.turn", {"prompt": "Once more.", "session": result["session"]}
        )
        assert again["turn"] == 2
        await until(
            "the second closing message",
            lambda: [m for m in client.messages if "Again." in m.message],
        )
        first, second = created
        await until(
            "the second progress to end",
            lambda: (second, "end") in progress,
        )
        assert [kind for token, kind in progress if token == first] == []
        kinds = [kind for token, kind in progress if token == second]
        assert kinds[0] == "begin" and kinds[-1] == "end"
    finally:
        answered.set()
        await client.shutdown_session()


PLAN = [
    {"content": "Read hello.py", "status": "completed"},
    {"content": "Make the greeting French", "status": "in_progress"},
    {"content": "Say what changed", "status": "pending"},
]


@pytest.mark.parametrize("editor", ["eglot@v1.9", "lsp-mode@v8.0.0"])
async def test_a_client_with_no_other_view_of_the_turn_reads_its_plan_in_the_closing_message(
    workspace: Path, fake: FakeModelServer, tmp_path: Path, editor: str
) -> None:
    """eglot 1.9 shows neither the transcript (no ``showDocument``) nor
    progress: the closing message is all it sees of a turn, so it lists the
    plan's steps and their status. lsp-mode shows progress: its message
    stays short (the plan is in the transcript)."""
    window = capabilities_of(editor).window
    lists_plan = editor.startswith("eglot")
    assert lists_plan == (window is None or not (window.show_document or window.work_done_progress))
    ticked = [PLAN[0], {**PLAN[1], "status": "completed"}, PLAN[2]]
    fake.script(
        tool_reply(("update_plan", {"entries": PLAN})),
        tool_reply(("update_plan", {"entries": ticked})),
        text_reply("Half way."),
    )
    client = await started(editor, None, workspace, fake, tmp_path)
    try:
        result = await client.command("rhema.turn", {"prompt": "French, please"})
        await until(
            "the closing message", lambda: [m for m in client.messages if "Half way." in m.message]
        )
    finally:
        await client.shutdown_session()

    transcript = transcript_of(workspace, result["session"])
    [message] = [m.message for m in client.messages if "Half way." in m.message]
    plan = (
        " Plan: 1. Read hello.py (completed); 2. Make the greeting French (completed);"
        " 3. Say what changed (pending)."
    )
    assert message == (
        f"Rhema: Half way. (end turn).{plan if lists_plan else ''} Transcript: {transcript}"
    )


@pytest.mark.parametrize(("answer", "ran"), [("Run", True), ("", False), ("Deny", False)])
async def test_an_eglot_user_types_the_approval_answer_into_an_empty_prompt(
    workspace: Path, fake: FakeModelServer, tmp_path: Path, answer: str, ran: bool
) -> None:
    """eglot 1.9 fills its approval prompt with the first action's title: the
    first is unnamed, so the prompt starts empty and what the user types is
    the answer ("Run" runs); an empty answer (RET) denies, as "Deny" does."""
    fake.script(
        tool_reply(("run_command", {"command": "touch ran.txt", "escalate": True})),
        text_reply("Done."),
    )
    rhema = settings_for(fake, mode="agent")
    client = await start_editor(
        "eglot@v1.9",
        [workspace],
        rhema,
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": ""},
        capabilities=capabilities_of("eglot@v1.9"),
        initialization_options=rhema,
    )
    client.state.answer = answer
    try:
        await client.command("rhema.turn", {"prompt": "Create ran.txt"})
        await until(
            "the closing message", lambda: [m for m in client.messages if "Done." in m.message]
        )
    finally:
        await client.shutdown_session()

    [question] = client.state.questions
    assert "touch ran.txt" in question.message
    assert [action.title for action in question.actions or []] == ["", "Deny", "Run"]
    assert (workspace / "ran.txt").exists() is ran
