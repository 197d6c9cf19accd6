"""A plain eglot user runs turns: the answer is visible, and a long turn blocks nothing.

eglot 1.9 renders no ``rhema/event``, advertises no ``window.workDoneProgress``
and no ``window.showDocument``: the server detaches the turn, writes the
transcript and shows the outcome with ``window/showMessage``, which eglot
logs in ``*Messages*``: all it sees of a turn, so that message lists the
turn's plan too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.emacs.harness import run_emacs, shown, transcript
from tests.editors.fake_settings import settings_for
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

ANSWER = "greet returns a greeting for name.\nIt concatenates two strings."

# The README's recipe, typed at M-: as a user would.
BY_COMMAND = r"""
(T-run
 (T-open "hello.py")
 (lambda ()
   (T-keys (concat "\e:(eglot-execute-command (eglot--current-server-or-lose)"
                   " 'rhema.turn [(:prompt \"What does greet do?\")])\r")))
 (T-until "the answer to be shown" (lambda () (T-shown "greet returns a greeting"))))
"""

BY_CODE_ACTION = r"""
(T-run
 (T-open "hello.py")
 (lambda () (T-select-lines "hello.py" 1 2))
 (T-code-action "Rhema: explain" "menu")
 (T-until "the answer to be shown" (lambda () (T-shown "greet returns a greeting"))))
"""


@pytest.mark.parametrize("body", [BY_COMMAND, BY_CODE_ACTION], ids=["command", "code-action"])
def test_the_answer_of_a_turn_is_shown_and_written_to_the_transcript(
    body: str, workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(text_reply(ANSWER, thinking="Read greet first.", chunk=8))

    r = run_emacs(
        body, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    # The answer reached the user as a message eglot shows and logs.
    [message] = [m for m in shown(r["messages"]) if "greet returns a greeting" in m]
    assert "greet returns a greeting for name." in message
    # ... with the stop reason and where the whole transcript is.
    [path] = list((workspace / ".rhema" / "transcripts").glob("*.md"))
    assert str(path) in message or path.name in message
    assert path == transcript(workspace, path.stem)
    text = path.read_text(encoding="utf-8")
    assert "Read greet first." in text
    assert ANSWER in text
    # The command answered at once; nothing timed out.
    assert "Timed out" not in r["messages"]
    assert "jsonrpc-error" not in r["messages"]


LONG_TURN = r"""
(defvar ticks 0)
;; jsonrpc gives up on a request after `jsonrpc-default-request-timeout'
;; (10 s). Once rhema.turn has answered (at once: the turn runs on), 1 s,
;; so the turn outlasts it without the test waiting 10 s.
(T-run
 (T-open "hello.py")
 (lambda ()
   (run-with-timer 0.5 0.5 (lambda () (setq ticks (1+ ticks))))
   (T-set "started" (T-command 'rhema.turn '(:prompt "Take your time.")))
   (setq jsonrpc-default-request-timeout 1)
   (T-set "ticks_at_start" ticks))
 ;; While the model is still writing (it holds its answer until released),
 ;; the user switches buffers and types.
 (lambda ()
   (switch-to-buffer "notes")
   (T-keys "typed while the model writes"))
 (T-until "the typing to land"
          (lambda () (with-current-buffer "notes"
                       (string-search "typed while the model writes" (buffer-string)))))
 (lambda ()
   (T-set "shown_before_typing_landed" (T-shown "The slow model"))
   (T-set "ticks_when_typed" ticks)
   (T-keys "\e:(+ 20 22)\r"))
 (T-until "M-: to evaluate" (lambda () (T-message-matching "^42")))
 (lambda () (T-set "shown_before_eval" (T-shown "The slow model")))
 (T-until "the turn to outlast the request timeout"
          (lambda () (>= ticks (+ (T-get "ticks_at_start") 4))))
 (lambda () (T-release-model "MODEL_ORIGIN"))
 (T-until "the slow answer" (lambda () (T-shown "The slow model")) 90)
 (lambda () (T-set "ticks_at_end" ticks)))
"""


def test_a_turn_longer_than_the_request_timeout_neither_times_out_nor_blocks_emacs(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    # The model shows one character, then holds the rest until Emacs has
    # typed, evaluated and outlasted jsonrpc's request timeout.
    fake.script(text_reply("The slow model has answered!!", chunk=1, hold=2))

    r = run_emacs(
        LONG_TURN.replace("MODEL_ORIGIN", fake.origin),
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url),
        timeout=150,
    )

    assert r["started"]["started"] is True
    assert r["started"]["turn"] == 1
    # Emacs kept working while the turn ran: typing and M-: were served before
    # the answer arrived, and timers kept firing.
    assert r["shown_before_typing_landed"] is None
    assert r["shown_before_eval"] is None
    assert r["ticks_at_end"] > r["ticks_when_typed"]
    # The late answer was not dropped, and nothing timed out.
    assert any("The slow model has answered!!" in m for m in shown(r["messages"]))
    assert "Timed out" not in r["messages"]
    text = transcript(workspace, r["started"]["session"]).read_text(encoding="utf-8")
    assert "The slow model has answered!!" in text


PLAN = [
    {"content": "Read greet", "status": "completed"},
    {"content": "Say what it returns", "status": "in_progress"},
]


def test_the_closing_message_lists_the_turns_plan(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(tool_reply(("update_plan", {"entries": PLAN})), text_reply("It greets."))

    r = run_emacs(
        BY_COMMAND.replace("greet returns a greeting", "It greets."),
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url),
    )

    [message] = [m for m in shown(r["messages"]) if "It greets." in m]
    assert (
        "Rhema: It greets. (end turn). Plan: 1. Read greet (completed); 2. Say what it returns"
        " (in progress). Transcript: "
    ) in message


CONVERSATION = r"""
(T-run
 (T-open "hello.py")
 (lambda () (T-set "first" (T-command 'rhema.turn '(:prompt "My name is Ann."))))
 (T-until "the first answer" (lambda () (T-shown "Hello Ann.")))
 (lambda () (T-set "second" (T-command 'rhema.turn '(:prompt "What is my name?"))))
 (T-until "the second answer" (lambda () (T-shown "Your name is Ann.")))
 (lambda () (goto-char (point-min)))
 (T-code-action "Rhema: new conversation")
 (T-until "the new conversation" (lambda () (T-shown "next question starts a new conversation")))
 ;; The action's command answered too: a request sent while eglot still waits
 ;; on it would be unwound by its answer (jsonrpc's catch and throw).
 (T-until "the action's command to be answered"
          (lambda () (zerop (hash-table-count (jsonrpc--request-continuations T-server)))))
 (lambda () (T-set "third" (T-command 'rhema.turn '(:prompt "Hi, I am Bo."))))
 (T-until "the third answer" (lambda () (T-shown "Nice to meet you."))))
"""


def test_asks_are_one_conversation_until_the_user_starts_a_new_one(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    """eglot throws away the session id an ask answers with: the second ask
    still continues the first's session (the model hears the first), the
    session keeps one transcript, and "Rhema: new conversation" starts over."""
    fake.script(
        text_reply("Hello Ann."), text_reply("Your name is Ann."), text_reply("Nice to meet you.")
    )

    r = run_emacs(
        CONVERSATION, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    first, second, third = r["first"], r["second"], r["third"]
    assert second["session"] == first["session"] and second["turn"] == 2
    said = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "user"]
    assert any("My name is Ann." in str(content) for content in said)
    assert third["session"] != first["session"] and third["turn"] == 1
    assert "Ann" not in str(fake.requests[2]["messages"])
    transcripts = sorted((workspace / ".rhema" / "transcripts").glob("*.md"))
    assert transcripts == sorted(
        [transcript(workspace, first["session"]), transcript(workspace, third["session"])]
    )
    text = transcript(workspace, first["session"]).read_text(encoding="utf-8")
    assert "My name is Ann." in text and "Your name is Ann." in text
