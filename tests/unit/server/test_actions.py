"""The code actions offered to clients with and without a rhema plugin, and the
prompt pieces they lead to (diagnostics in the context, the selection's
trailing newline kept)."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import default_converter

from rhema_lsp.runs.prompts import ContextPiece, problem_line, render_context, replacement_for
from rhema_lsp.server.actions import comment_instruction, offered_actions
from rhema_lsp.server.clients import ClientFeatures

URI = "file:///w/hello.py"
TEXT = 'def greet(name):\n    # rhema: use an f-string\n    return "hello " + nam\n'
CONVERTER = default_converter()


def request(
    start: tuple[int, int], end: tuple[int, int], *diagnostics: types.Diagnostic
) -> types.CodeActionParams:
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI),
        range=types.Range(start=types.Position(*start), end=types.Position(*end)),
        context=types.CodeActionContext(diagnostics=list(diagnostics)),
    )


def offered(params: types.CodeActionParams, features: ClientFeatures, **kw: Any) -> list[Any]:
    return offered_actions(
        params, features, TEXT, running=kw.get("running", False), unstructure=CONVERTER.unstructure
    )


def argument(action: types.CodeAction) -> dict[str, Any]:
    assert action.command is not None and action.command.arguments
    found = action.command.arguments[0]
    assert isinstance(found, dict)
    return found


NAM = types.Diagnostic(
    range=types.Range(start=types.Position(2, 24), end=types.Position(2, 27)),
    message="undefined name 'nam'",
    code="F821",
    source="pyflakes",
    severity=types.DiagnosticSeverity.Error,
)


def test_a_plain_client_gets_ready_rewrites_and_the_comment_instruction() -> None:
    actions = offered(request((1, 0), (3, 0)), ClientFeatures())
    titles = [a.title for a in actions]
    assert titles == [
        "Rhema: use an f-string",
        "Rhema: add docstrings",
        "Rhema: simplify",
        "Rhema: explain",
        "Rhema: new conversation",
    ]
    first = actions[0]
    assert first.command.command == "rhema.edit"
    assert argument(first) == {
        "uri": URI,
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 3, "character": 0}},
        "instruction": "use an f-string",
    }
    assert actions[-2].command.command == "rhema.turn"
    assert argument(actions[-2])["mode"] == "ask"
    assert actions[-1].command.command == "rhema.newConversation"
    assert argument(actions[-1]) == {}


def test_our_clients_get_their_own_edit_selection_instead() -> None:
    actions = offered(request((0, 0), (1, 0)), ClientFeatures(events=True, edit_selection=True))
    assert [(a.title, a.command.command) for a in actions] == [
        ("Rhema: edit selection", "rhema.editSelection"),
        ("Rhema: explain selection", "rhema.turn"),
    ]


def test_fix_this_on_every_diagnostic_even_without_a_selection() -> None:
    [fix] = offered(request((2, 25), (2, 25), NAM), ClientFeatures(events=True))
    assert fix.title == "Rhema: fix this"
    assert fix.kind == types.CodeActionKind.QuickFix
    assert fix.diagnostics == [NAM]
    turn = argument(fix)
    assert "undefined name 'nam'" in turn["prompt"]
    assert turn["context"] == [
        {
            "uri": URI,
            "diagnostics": [
                {
                    "range": {
                        "start": {"line": 2, "character": 24},
                        "end": {"line": 2, "character": 27},
                    },
                    "message": "undefined name 'nam'",
                    "code": "F821",
                    "source": "pyflakes",
                    "severity": "error",
                }
            ],
        }
    ]


def test_cancel_is_offered_while_a_turn_runs_and_only_filters_kinds() -> None:
    ours = ClientFeatures(events=True)
    assert [a.title for a in offered(request((0, 0), (0, 0)), ours)] == []
    running = offered(request((0, 0), (0, 0)), ours, running=True)
    assert [(a.title, argument(a)) for a in running] == [("Rhema: cancel running turn", {})]
    plain = offered(request((0, 0), (0, 0)), ClientFeatures(), running=True)
    assert [a.title for a in plain] == ["Rhema: new conversation", "Rhema: cancel running turn"]
    params = request((1, 0), (3, 0), NAM)
    params.context.only = [types.CodeActionKind.QuickFix]
    assert [a.title for a in offered(params, ClientFeatures())] == ["Rhema: fix this"]


@pytest.mark.parametrize(
    ("line", "instruction"),
    [
        ("    # rhema: add type hints", "add type hints"),
        ("  // rhema: use const", "use const"),
        ("-- rhema: index this", "index this"),
        ("/* rhema: split it */", "split it"),
        ("x = 'rhema: not a comment'", None),
    ],
)
def test_comment_instructions(line: str, instruction: str | None) -> None:
    assert comment_instruction(f"a = 1\n{line}\n") == instruction


def test_diagnostics_are_rendered_with_their_context() -> None:
    piece = ContextPiece(
        path="hello.py",
        text=TEXT,
        problems=(problem_line(2, "undefined name  'nam'", "error", "pyflakes", "F821"),),
    )
    rendered = render_context([piece])
    assert rendered.endswith(
        "Problems the editor reports in hello.py:\n"
        "- line 3 (error, pyflakes F821): undefined name 'nam'"
    )


@pytest.mark.parametrize(
    ("selected", "reply", "replacement"),
    [
        ("    x = 1\n", "    x = 2", "    x = 2\n"),
        ("    x = 1\n", "```python\n    x = 2\n```", "    x = 2\n"),
        ("x = 1", "x = 2", "x = 2"),
        ("x = 1\n", "x = 2\n", "x = 2\n"),
    ],
)
def test_the_selections_trailing_newline_is_kept(
    selected: str, reply: str, replacement: str
) -> None:
    assert replacement_for(selected, reply) == replacement
