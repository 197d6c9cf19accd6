"""``rhema/language`` over the real server's protocol (in process): a client
that declared ``language`` is asked, and whatever it does (answers, answers
garbage, errors, never answers) ends as an answer or a clear, bounded
:class:`LanguageFailed`, with the server still serving."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.server.editor_language import EditorFirst, EditorLanguage
from rhema_lsp.tools import DiagnosticsAnswer, LanguageAnswer, LanguageFailed
from tests.unit.server.loopback import Loopback, start, stop

URI = "file:///w/pkg/core.py"
DEFINITION = {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 4}}
SPAN = {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}
LOCATION = {"uri": URI, "range": SPAN}
DIAGNOSTIC = {
    "range": {"start": {"line": 2, "character": 6}, "end": {"line": 2, "character": 8}},
    "message": 'Argument of type "Literal[42]" cannot be assigned to parameter "name"',
    "severity": 1,
    "source": "basedpyright",
}


class LanguageClient(Loopback):
    """A client answering ``rhema/language`` with ``reply(params)``: a
    ``("result", value)``, an ``("error", message)``, or ``None`` (never).
    Its answers enter as frames' bodies do (``receive``), as JSON."""

    reply: Any = None
    asked_language: list[Any]

    def _answer(self, request: dict[str, Any]) -> None:
        if request["method"] != "rhema/language":
            super()._answer(request)
            return
        self.asked_language.append(request["params"])
        outcome = self.reply(request["params"])
        if outcome is None:
            return
        kind, value = outcome
        if kind == "result":
            self.respond({"jsonrpc": "2.0", "id": request["id"], "result": value})
        else:
            error = {"code": -32603, "message": value}
            self.respond({"jsonrpc": "2.0", "id": request["id"], "error": error})

    def respond(self, payload: dict[str, Any]) -> None:
        self.server.protocol.receive(json.dumps(payload).encode())


@pytest.fixture
async def client(tmp_path: Path, quiet_env: None) -> Any:
    declared = {"clientCapabilities": {"events": True, "language": True}}
    loop: Any = await start(tmp_path, declared, events=False)
    loop.__class__ = LanguageClient
    loop.asked_language = []
    await loop.command("rhema.status", {})  # the service (and its editor) is up
    yield loop
    await stop(loop)


def language(client: LanguageClient, **bounds: float) -> EditorLanguage:
    service = client.server.started_service
    assert service is not None
    return EditorLanguage(client.server, service.state.editor, **bounds)


async def test_a_client_that_declared_language_is_who_answers_the_tools(client: Any) -> None:
    status = await client.command("rhema.status", {})
    assert status["languageAnswers"] == "editor"  # and rhema.status says so
    state = client.server.started_service.state
    assert state.client.language is True
    chosen = state.language()
    assert isinstance(chosen, EditorFirst)
    assert (chosen.editor, chosen.own) == (state.editor_language, state.languages)


async def test_a_client_that_did_not_declare_it_is_never_asked(
    tmp_path: Path, quiet_env: None
) -> None:
    plain = await start(tmp_path, {})
    try:
        status = await plain.command("rhema.status", {})
        assert status["languageAnswers"] == "agent"
        service = plain.server.started_service
        assert service is not None
        state = service.state
        assert state.client.language is False
        assert state.language() is state.languages  # the agent's own
    finally:
        await stop(plain)


async def test_an_lsp_answer_comes_back_raw_with_its_source(client: Any) -> None:
    client.reply = lambda params: ("result", {"result": [LOCATION], "source": "VS Code"})
    answer = await language(client).request("textDocument/definition", DEFINITION, uri=URI)
    assert answer == LanguageAnswer(result=[LOCATION], source="VS Code")
    assert client.asked_language == [{"method": "textDocument/definition", "params": DEFINITION}]


async def test_null_means_no_language_server_serves_the_document(client: Any) -> None:
    client.reply = lambda params: ("result", None)
    assert await language(client).request("textDocument/definition", DEFINITION, uri=URI) is None
    assert await language(client).diagnostics(URI, 3, wait=0.5) is None


async def test_diagnostics_ask_for_the_version_and_the_wait(client: Any) -> None:
    answer = {"diagnostics": [DIAGNOSTIC], "source": "nvim: basedpyright", "complete": True}
    client.reply = lambda params: ("result", answer)
    got = await language(client).diagnostics(URI, 7, wait=1.5)
    assert got == DiagnosticsAnswer(
        diagnostics=(DIAGNOSTIC,), source="nvim: basedpyright", complete=True
    )
    assert client.asked_language == [
        {"method": "diagnostics", "params": {"uri": URI, "version": 7, "waitMs": 1500}}
    ]


async def test_diagnostics_of_the_current_text_ask_for_the_synced_version(
    client: Any, tmp_path: Path
) -> None:
    uri = (tmp_path / "use.py").as_uri()
    document = {"uri": uri, "languageId": "python", "version": 4, "text": "x = 1\n"}
    client.notify("textDocument/didOpen", {"textDocument": document})
    change = {"textDocument": {"uri": uri, "version": 5}, "contentChanges": [{"text": "x = 2\n"}]}
    client.notify("textDocument/didChange", change)
    answer = {"diagnostics": [], "source": "VS Code", "complete": True}
    client.reply = lambda params: ("result", answer)
    await language(client).diagnostics(uri, None, wait=1.0)
    await language(client).diagnostics(URI, None, wait=1.0)
    assert [asked["params"]["version"] for asked in client.asked_language] == [5, None]


async def test_an_error_reply_is_a_clear_failure(client: Any) -> None:
    client.reply = lambda params: ("error", "No provider for textDocument/rename")
    with pytest.raises(LanguageFailed) as failed:
        await language(client).request("textDocument/rename", DEFINITION, uri=URI)
    assert str(failed.value) == (
        "the editor's language features failed on textDocument/rename: "
        "No provider for textDocument/rename"
    )


@pytest.mark.parametrize(
    ("method", "garbage", "says"),
    [
        ("textDocument/definition", "not an object", "valid answer"),
        ("textDocument/definition", {"result": [LOCATION]}, "`source` Field required"),
        ("textDocument/definition", {"result": [{"uri": 3}], "source": "x"}, "valid answer"),
        ("textDocument/references", {"result": {"line": 1}, "source": "x"}, "valid answer"),
        ("diagnostics", {"diagnostics": [{"message": "m"}], "source": "x", "complete": 1}, "range"),
        ("diagnostics", {"diagnostics": "none", "source": "x", "complete": 1}, "diagnostics"),
    ],
)
async def test_garbage_is_a_clear_failure(
    client: Any, method: str, garbage: Any, says: str
) -> None:
    client.reply = lambda params: ("result", garbage)
    service = language(client)
    asked = (
        service.diagnostics(URI, 1, wait=0.1)
        if method == "diagnostics"
        else service.request(method, DEFINITION, uri=URI)
    )
    with pytest.raises(LanguageFailed) as failed:
        await asked
    message = str(failed.value)
    assert message.startswith(f"the editor answered {method} with something that is not a valid")
    assert says in message


async def test_a_client_that_never_answers_is_bounded_and_withdrawn(client: Any) -> None:
    client.reply = lambda params: None
    with pytest.raises(LanguageFailed) as failed:
        await language(client, timeout=0.2).request("workspace/symbol", {"query": "greet"}, uri=URI)
    assert str(failed.value).startswith(
        "the editor's language features did not answer workspace/symbol within 0.2 s"
    )
    cancels = client.of("$/cancelRequest")
    assert len(cancels) == 1 and str(cancels[0]["id"]).startswith("rhema-language-")
    # The diagnostics form is bounded by its own wait plus the margin.
    with pytest.raises(LanguageFailed, match=r"did not answer diagnostics within 0\.3 s"):
        await language(client, margin=0.2).diagnostics(URI, 1, wait=0.1)
    # And the server goes on serving.
    client.reply = lambda params: ("result", {"result": [], "source": "VS Code"})
    answer = await language(client).request("workspace/symbol", {"query": "g"}, uri=URI)
    assert answer == LanguageAnswer(result=[], source="VS Code")
    assert await client.command("rhema.status", {})


async def test_a_late_answer_after_the_bound_is_ignored(client: Any) -> None:
    late: list[Any] = []

    def later(params: Any) -> None:
        late.append(params)

    client.reply = later
    with pytest.raises(LanguageFailed):
        await language(client, timeout=0.1).request("workspace/symbol", {"query": "g"}, uri=URI)
    request_id = client.of("$/cancelRequest")[0]["id"]
    client.respond({"jsonrpc": "2.0", "id": request_id, "result": {"result": [], "source": "x"}})
    await asyncio.sleep(0)
    assert await client.command("rhema.status", {})


async def test_the_source_shown_to_the_model_is_one_short_line(client: Any) -> None:
    source = "VS\nCode " + "x" * 200
    client.reply = lambda params: ("result", {"result": None, "source": source})
    answer = await language(client).request("textDocument/definition", DEFINITION, uri=URI)
    assert answer is not None and answer.result is None
    assert answer.source == ("VS Code " + "x" * 200)[:80]


class Answers:
    """A language service answering from a table (``None``: no server)."""

    def __init__(self, name: str, serves: bool) -> None:
        self.name, self.serves = name, serves
        self.asked: list[str] = []

    async def request(self, method: str, params: Any, *, uri: str) -> LanguageAnswer | None:
        self.asked.append(method)
        return LanguageAnswer(result=[], source=self.name) if self.serves else None

    async def diagnostics(self, uri: str, version: Any, *, wait: float) -> Any:
        self.asked.append("diagnostics")
        return DiagnosticsAnswer(source=self.name) if self.serves else None


@pytest.mark.parametrize(
    ("editor_serves", "own_serves", "source", "own_asked"),
    [
        (True, True, "VS Code", []),
        (False, True, "basedpyright", ["workspace/symbol"]),
        (False, False, None, ["workspace/symbol"]),
    ],
)
async def test_the_agents_own_servers_answer_what_the_editors_do_not(
    editor_serves: bool, own_serves: bool, source: str | None, own_asked: list[str]
) -> None:
    editor, own = Answers("VS Code", editor_serves), Answers("basedpyright", own_serves)
    both = EditorFirst(editor, own)
    answer = await both.request("workspace/symbol", {"query": "g"}, uri=URI)
    assert (answer.source if answer else None) == source
    assert own.asked == own_asked
    problems = await both.diagnostics(URI, 1, wait=0.1)
    assert (problems.source if problems else None) == source


async def test_a_failure_of_the_editors_is_not_passed_to_the_agents_own() -> None:
    class Failing(Answers):
        async def request(self, method: str, params: Any, *, uri: str) -> LanguageAnswer | None:
            raise LanguageFailed("the editor's language features failed on workspace/symbol: x")

    own = Answers("basedpyright", True)
    with pytest.raises(LanguageFailed):
        await EditorFirst(Failing("VS Code", True), own).request("workspace/symbol", {}, uri=URI)
    assert own.asked == []
