"""The closing ``showMessage`` of a plain client's turn reads on one line:
whitespace runs made single spaces, the answer cut to ``GIST_CHARS`` with a
marker, the stop reason, the transcript's path last."""

from __future__ import annotations

from pathlib import Path

from rhema_lsp.server.plain_output import GIST_CHARS, closing_message

PATH = Path("/work/project/.rhema/transcripts/abc.md")


def test_a_multi_line_answer_becomes_one_paragraph_with_the_path_last() -> None:
    message = closing_message("First line.\n\n  Second\tline.\n", "end turn", PATH)

    assert message == f"Rhema: First line. Second line. (end turn). Transcript: {PATH}"


def test_a_long_answer_is_cut_with_a_marker_and_the_path_survives() -> None:
    message = closing_message("word " * 200, "max tokens", PATH)

    gist = message.removeprefix("Rhema: ").split(" (max tokens)")[0]
    assert len(gist) <= GIST_CHARS
    assert gist.endswith("…")
    assert message.endswith(f"(max tokens). Transcript: {PATH}")


def test_no_answer_text_says_so() -> None:
    assert closing_message(" \n", "cancelled", PATH).startswith(
        "Rhema: (no answer text) (cancelled)"
    )


def test_a_plan_is_listed_step_by_step_with_each_status_before_the_path() -> None:
    from rhema_lsp.engine import PlanEntry

    plan = [
        PlanEntry("Read hello.py", "completed"),
        PlanEntry("Make the greeting\nFrench", "in_progress"),
        PlanEntry("Say what changed", "pending"),
    ]

    message = closing_message("Half way.", "end turn", PATH, plan)

    assert message == (
        "Rhema: Half way. (end turn). Plan: 1. Read hello.py (completed); 2. Make the greeting"
        f" French (in progress); 3. Say what changed (pending). Transcript: {PATH}"
    )
