"""C-g at an approval prompt: eglot never answers the request; the server's
``approvalTimeout`` counts that as Deny, and the run ends with nothing run.
Typing "Run" at the prompt (which starts empty) runs the command; RET on the
empty prompt denies it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.emacs.harness import run_emacs
from tests.editors.fake_settings import settings_for
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

QUIT_AT_PROMPT = r"""
(T-run
 (T-open "hello.py")
 (lambda () (T-set "started" (T-command 'rhema.turn '(:prompt "Create ran.txt"))))
 ;; eglot asks with completing-read; the user presses C-g on the terminal.
 (T-answer "Choose an option" "\C-g" "prompt")
 (T-until "the quit" (lambda () (null (T-prompt))))
 (T-until "the turn to end" (lambda () (T-shown "Not run")))
 (lambda ()
   (T-set "session" (T-open-session (plist-get (T-get "started") :session)))))
"""


def test_c_g_at_an_approval_prompt_ends_the_run_with_nothing_run(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(
        tool_reply(("run_command", {"command": "touch ran.txt", "escalate": True})),
        text_reply("Not run: you denied it."),
    )

    r = run_emacs(
        QUIT_AT_PROMPT,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url, mode="agent", approvalTimeout=3),
    )

    # An unnamed action first: eglot's prompt starts empty (it fills it with
    # the first title), and an empty answer denies.
    assert list(r["prompt"]["choices"][:2]) == ["", "Deny"]
    assert "touch ran.txt" in r["prompt"]["prompt"]
    # The unanswered prompt counted as Deny: the command never ran, the model
    # was told so (an error result), and the turn went on to its end.
    assert not (workspace / "ran.txt").exists()
    [result] = [
        part
        for message in r["session"]["messages"]
        for part in message["content"]
        if part["type"] == "tool_result"
    ]
    assert result["is_error"] is True
    assert len(fake.requests) == 2


TYPE_AT_PROMPT = r"""
(T-run
 (T-open "hello.py")
 (lambda () (T-set "started" (T-command 'rhema.turn '(:prompt "Create ran.txt"))))
 (T-until "the approval prompt" (lambda () (T-prompt)))
 (lambda ()
   (T-set "typed_over" (with-current-buffer (window-buffer (active-minibuffer-window))
                         (minibuffer-contents-no-properties)))
   (T-keys "KEYS"))
 (T-until "the turn to end" (lambda () (T-shown "Done."))))
"""


@pytest.mark.parametrize(("keys", "ran"), [("Run\r", True), ("\r", False)], ids=["run", "ret"])
def test_a_typed_answer_at_the_approval_prompt_is_the_answer(
    workspace: Path, fake: FakeModelServer, tmp_path: Path, keys: str, ran: bool
) -> None:
    fake.script(
        tool_reply(("run_command", {"command": "touch ran.txt", "escalate": True})),
        text_reply("Done."),
    )

    r = run_emacs(
        TYPE_AT_PROMPT.replace("KEYS", keys),
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url, mode="agent", approvalTimeout=30),
    )

    assert r["typed_over"] == ""  # not "Deny": typing "Run" gives "Run", not "DenyRun"
    assert (workspace / "ran.txt").exists() is ran
