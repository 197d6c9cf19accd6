"""The code actions the server offers, for clients with and without a rhema plugin.

Every action names a contract command with its argument object, so an editor
with no rhema code runs it through plain ``workspace/executeCommand``:

- on a selection: "Rhema: add docstrings" and "Rhema: simplify" rewrite it
  (``rhema.edit``), "Rhema: explain" asks about it (``rhema.turn`` in ``ask``
  mode), and a ``rhema: <instruction>`` comment inside it becomes
  "Rhema: <instruction>";
- on every diagnostic the client sends in the request's context, a
  ``quickfix`` "Rhema: fix this" runs a turn with the diagnostic as context;
- while a turn runs, "Rhema: cancel running turn" (``rhema.cancel``);
- for a client that renders no events, "Rhema: new conversation"
  (``rhema.newConversation``): its asks continue the folder's latest
  session until it starts a new one (:mod:`~rhema_lsp.server.conversation`).

A client that declared ``clientCapabilities.editSelection`` (our VS Code and
Neovim clients) gets its own "Rhema: edit selection", which asks for the
instruction, and "Rhema: explain selection" instead of the ready rewrites.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
from typing import Any

from lsprotocol import types

from rhema_lsp.server.clients import ClientFeatures
from rhema_lsp.server.conversation import NEW_CONVERSATION_TITLE
from rhema_lsp.tools.positions import LineIndex

__all__ = ["READY_REWRITES", "comment_instruction", "offered_actions"]

READY_REWRITES = {
    "Rhema: add docstrings": (
        "Add docstrings to the functions and classes in the selection, in the file's "
        "style; change nothing else."
    ),
    "Rhema: simplify": (
        "Simplify the selected code without changing what it does; keep names and "
        "comments that still apply."
    ),
}
"""Ready instructions on a selection: title -> the instruction ``rhema.edit`` gets."""

EXPLAIN_PROMPT = "Explain the selected code."

_COMMENT = re.compile(r"(?:#|//|--|;+|/\*|\*|<!--)\s*rhema:\s*(?P<instruction>.+?)\s*(?:\*/|-->)?$")

Unstructure = Callable[[Any], Any]

_SEVERITY = {
    types.DiagnosticSeverity.Error: "error",
    types.DiagnosticSeverity.Warning: "warning",
    types.DiagnosticSeverity.Information: "information",
    types.DiagnosticSeverity.Hint: "hint",
}


def comment_instruction(selected: str) -> str | None:
    """The instruction of the first ``rhema: ...`` comment in ``selected``."""
    for line in selected.splitlines():
        found = _COMMENT.search(line)
        if found is not None:
            return found.group("instruction")
    return None


def _selected_text(text: str | None, selection: types.Range, encoding: str) -> str:
    if text is None:
        return ""
    index = LineIndex(text, encoding)
    return text[index.offset(selection.start) : index.offset(selection.end)]


def _command(title: str, command: str, argument: dict[str, Any]) -> types.Command:
    return types.Command(title=title, command=command, arguments=[argument])


def _diagnostic_ref(diagnostic: types.Diagnostic, unstructure: Unstructure) -> dict[str, Any]:
    ref: dict[str, Any] = {"range": unstructure(diagnostic.range), "message": diagnostic.message}
    if diagnostic.code is not None:
        ref["code"] = diagnostic.code
    if diagnostic.source is not None:
        ref["source"] = diagnostic.source
    if diagnostic.severity is not None:
        ref["severity"] = _SEVERITY[diagnostic.severity]
    return ref


def _fix_this(uri: str, diagnostic: types.Diagnostic, unstructure: Unstructure) -> types.CodeAction:
    line = diagnostic.range.start.line + 1
    prompt = (
        f"Fix the problem the editor reports at line {line}: {diagnostic.message}. "
        "Change only what the fix needs."
    )
    context = {"uri": uri, "diagnostics": [_diagnostic_ref(diagnostic, unstructure)]}
    return types.CodeAction(
        title="Rhema: fix this",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        command=_command(
            "Rhema: fix this",
            "rhema.turn",
            {"prompt": prompt, "context": [context], "mode": "edit"},
        ),
    )


def _selection_actions(
    uri: str,
    selection: types.Range,
    selected: str,
    features: ClientFeatures,
    unstructure: Unstructure,
) -> list[types.CodeAction]:
    target = {"uri": uri, "range": unstructure(selection)}
    explain = {"prompt": EXPLAIN_PROMPT, "context": [target], "mode": "ask"}
    if features.edit_selection:
        return [
            types.CodeAction(
                title="Rhema: edit selection",
                kind=types.CodeActionKind.RefactorRewrite,
                command=_command("Rhema: edit selection", "rhema.editSelection", target),
            ),
            types.CodeAction(
                title="Rhema: explain selection",
                kind=types.CodeActionKind.Empty,
                command=_command("Rhema: explain selection", "rhema.turn", explain),
            ),
        ]
    rewrites = dict(READY_REWRITES)
    instruction = comment_instruction(selected)
    actions = []
    if instruction is not None:
        rewrites = {f"Rhema: {instruction}": instruction, **rewrites}
    for title, text in rewrites.items():
        actions.append(
            types.CodeAction(
                title=title,
                kind=types.CodeActionKind.RefactorRewrite,
                command=_command(title, "rhema.edit", {**target, "instruction": text}),
            )
        )
    actions.append(
        types.CodeAction(
            title="Rhema: explain",
            kind=types.CodeActionKind.Empty,
            command=_command("Rhema: explain", "rhema.turn", explain),
        )
    )
    return actions


def offered_actions(
    params: types.CodeActionParams,
    features: ClientFeatures,
    text: str | None,
    *,
    running: bool,
    unstructure: Unstructure,
    encoding: str = "utf-16",
) -> list[types.CodeAction]:
    """The actions for one ``textDocument/codeAction`` request.

    Parameters
    ----------
    params
        The request: document, range and the diagnostics in its context.
    features
        What the client declared (``editSelection``).
    text
        The document's synced text (``None`` when it is not open).
    running
        Whether a turn is running in this server.
    unstructure
        Turns lsprotocol values into the JSON the arguments carry.
    encoding
        The negotiated position encoding.
    """
    uri = params.text_document.uri
    selection = params.range
    actions: list[types.CodeAction] = []
    if selection.start != selection.end:
        selected = _selected_text(text, selection, encoding)
        actions += _selection_actions(uri, selection, selected, features, unstructure)
    only = params.context.only
    for diagnostic in params.context.diagnostics:
        actions.append(_fix_this(uri, diagnostic, unstructure))
    if features.continues_sessions:
        actions.append(
            types.CodeAction(
                title=NEW_CONVERSATION_TITLE,
                kind=types.CodeActionKind.Empty,
                command=_command(NEW_CONVERSATION_TITLE, "rhema.newConversation", {}),
            )
        )
    if running:
        actions.append(
            types.CodeAction(
                title="Rhema: cancel running turn",
                kind=types.CodeActionKind.Empty,
                command=_command("Rhema: cancel running turn", "rhema.cancel", {}),
            )
        )
    if only:
        actions = [a for a in actions if a.kind is not None and _wanted(a.kind, only)]
    return actions


def _value(kind: str) -> str:
    return kind.value if isinstance(kind, enum.Enum) else kind


def _wanted(kind: str, only: Sequence[str]) -> bool:
    have = _value(kind)
    return any(have == wanted or have.startswith(f"{wanted}.") for wanted in map(_value, only))
