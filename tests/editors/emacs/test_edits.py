"""A plain eglot user's buffers take the agent's edits: several per file, undoable,
from a turn, from a code action on a selection, and from "Rhema: fix this".

eglot applies ``workspace/applyEdit`` at once but sends ``didChange`` from an
idle timer, after the server has long had its answer; these edits must land
anyway, and report success to the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.editors.emacs.harness import run_emacs
from tests.editors.fake_settings import settings_for
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

ORIGINAL = 'def greet(name):\n    return "hello " + name\n'
EDITED = 'def greet(name: str) -> str:\n    return "hi " + name\n'
FIRST = ("edit_file", {"path": "hello.py", "old_text": '"hello "', "new_text": '"hi "'})
SECOND = (
    "edit_file",
    {
        "path": "hello.py",
        "old_text": "def greet(name):",
        "new_text": "def greet(name: str) -> str:",
    },
)

TWO_EDITS = r"""
(defun text () (T-buffer-text "hello.py"))
(defun press-until (keys target what)
  "Steps: press KEYS until hello.py reads the text saved as TARGET (at most
twice: one undo step per edit, or both in one)."
  (list (lambda () (T-set "before" (text)) (T-keys keys))
        (T-until what (lambda () (not (equal (text) (T-get "before")))))
        (lambda ()
          (unless (equal (text) (T-get target))
            (list :then
                  (lambda () (T-set "before" (text)) (T-keys keys))
                  (T-until what (lambda () (not (equal (text) (T-get "before"))))))))))
(T-run
 (T-open "hello.py")
 (lambda ()
   (T-set "original" (text))
   (T-set "started" (T-command 'rhema.turn '(:prompt "Type it and say hi."))))
 (T-until "the turn to end" (lambda () (T-shown "Both edits")))
 (T-synced "hello.py")
 (lambda ()
   (T-set "edited" (text))
   (T-set "modified" (buffer-modified-p (find-buffer-visiting (T-path "hello.py"))))
   (T-set "session" (T-open-session (plist-get (T-get "started") :session))))
 ;; C-/ (undo) in the buffer, as the user presses it.
 (lambda () (switch-to-buffer (find-buffer-visiting (T-path "hello.py"))))
 (press-until "\C-_" "original" "undo to change the buffer")
 (lambda () (T-set "after_undo" (text)))
 ;; C-M-_ (undo-redo) brings the agent's edits back.
 (press-until "\e\C-_" "edited" "redo to change the buffer")
 (lambda () (T-set "after_redo" (text)))
 (T-synced "hello.py")
 (lambda ()
   (T-set "undo_turn"
          (T-command 'rhema.undoTurn `(:session ,(plist-get (T-get "started") :session)))))
 (T-until "the revert to reach the buffer" (lambda () (equal (text) (T-get "original"))))
 (lambda () (T-set "after_undo_turn" (text))))
"""


def tool_results(session: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for message in session["messages"]
        for part in message["content"]
        if part["type"] == "tool_result"
    ]


@pytest.mark.parametrize(
    "replies",
    [
        [tool_reply(FIRST, SECOND)],
        [tool_reply(FIRST), tool_reply(SECOND)],
    ],
    ids=["one-step", "two-steps"],
)
def test_two_edits_to_one_file_in_one_turn_both_land_and_undo(
    replies: list[Any], workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(*replies, text_reply("Both edits are in."))

    r = run_emacs(
        TWO_EDITS, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["original"] == ORIGINAL
    assert r["edited"] == EDITED
    assert r["modified"] is True
    assert (workspace / "hello.py").read_text() == ORIGINAL  # in the buffer, not on disk
    results = tool_results(r["session"])
    assert len(results) == 2
    assert [result["is_error"] for result in results] == [False, False], results
    # undo and redo in the buffer, then the server's own revert.
    assert r["after_undo"] == ORIGINAL
    assert r["after_redo"] == EDITED
    assert r["undo_turn"]["conflicts"] == []
    assert r["undo_turn"]["reverted"] == [(workspace / "hello.py").as_uri()]
    assert r["after_undo_turn"] == ORIGINAL


SELECTION_ACTION = r"""
(T-run
 (T-open "hello.py")
 (lambda () (T-select-lines "hello.py" 2 (T-spec-last-line)))
 (T-code-action (T-spec-title) "menu")
 (T-until "the rewrite" (lambda () (not (equal (T-buffer-text "hello.py") (T-spec-original)))))
 (T-synced "hello.py")
 (lambda () (T-set "text" (T-buffer-text "hello.py"))))
"""

WITH_COMMENT = 'def greet(name):\n    # rhema: use an f-string\n    return "hello " + name\n'


@pytest.mark.parametrize(
    ("original", "last_line", "title", "rewrite", "instruction"),
    [
        (ORIGINAL, 2, "Rhema: simplify", '    return f"hello {name}"', None),
        (
            WITH_COMMENT,
            3,
            "Rhema: use an f-string",
            '    return f"hello {name}"',
            "use an f-string",
        ),
    ],
    ids=["simplify", "rhema-comment"],
)
def test_a_code_action_rewrites_the_selection(
    original: str,
    last_line: int,
    title: str,
    rewrite: str,
    instruction: str | None,
    workspace: Path,
    fake: FakeModelServer,
    tmp_path: Path,
) -> None:
    (workspace / "hello.py").write_text(original)
    # The model answers without the selection's trailing newline: it is kept.
    fake.script(text_reply(rewrite))
    body = (
        f"(defun T-spec-last-line () {last_line})\n"
        f"(defun T-spec-title () {elisp_string(title)})\n"
        f"(defun T-spec-original () {elisp_string(original)})\n" + SELECTION_ACTION
    )

    r = run_emacs(
        body, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["text"] == 'def greet(name):\n    return f"hello {name}"\n'
    offered = r["menu"]["choices"]
    assert title in offered
    assert {"Rhema: add docstrings", "Rhema: simplify", "Rhema: explain"} <= set(offered)
    # eglot did not declare the client-side command: it is not offered.
    assert all(
        action.get("command", {}).get("command") != "rhema.editSelection"
        for action in r["menu"]["actions"]
    )
    prompt = request_text(fake.requests[0])
    assert 'return "hello " + name' in prompt
    if instruction is not None:
        assert instruction in prompt


FIX_THIS = r"""
(T-run
 (T-open "hello.py")
 ;; A diagnostic on `nam', as a language server publishes it; eglot hands it to
 ;; flymake and sends it back in the code-action request's context.
 (lambda ()
   (with-current-buffer (find-buffer-visiting (T-path "hello.py"))
     (eglot-handle-notification
      T-server 'textDocument/publishDiagnostics
      :uri (eglot--path-to-uri (T-path "hello.py"))
      :diagnostics
      (vector '(:range (:start (:line 1 :character 22) :end (:line 1 :character 25))
                :severity 1 :code "F821" :source "pyflakes"
                :message "undefined name 'nam'")))
     (flymake-start)))
 (T-until "flymake to show the diagnostic"
          (lambda () (with-current-buffer (find-buffer-visiting (T-path "hello.py"))
                       (flymake-diagnostics (point-min) (point-max)))))
 (lambda ()
   (switch-to-buffer (find-buffer-visiting (T-path "hello.py")))
   (deactivate-mark)
   (goto-char (point-min))
   (search-forward "+ nam")
   (backward-char 1))
 (T-code-action "Rhema: fix this" "menu")
 (T-until "the turn to end" (lambda () (T-shown "Fixed")))
 (T-synced "hello.py")
 (lambda () (T-set "text" (T-buffer-text "hello.py"))))
"""


def test_fix_this_on_a_diagnostic_runs_a_turn_that_edits_the_file(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "hello.py").write_text('def greet(name):\n    return "hello " + nam\n')
    fake.script(
        tool_reply(
            ("edit_file", {"path": "hello.py", "old_text": "+ nam\n", "new_text": "+ name\n"})
        ),
        text_reply("Fixed the typo."),
    )

    r = run_emacs(
        FIX_THIS, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    assert r["text"] == ORIGINAL
    [fix] = [a for a in r["menu"]["actions"] if a["title"] == "Rhema: fix this"]
    assert fix["kind"] == "quickfix"
    # The diagnostic became the turn's context.
    prompt = request_text(fake.requests[0])
    assert "undefined name 'nam'" in prompt
    assert "F821" in prompt


def request_text(request: dict[str, Any]) -> str:
    """The text of every message of one chat-completions request, as sent."""
    return "\n".join(str(message.get("content")) for message in request["messages"])


def elisp_string(text: str) -> str:
    """``text`` as an Emacs Lisp string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
