"""The README's table of answering flags and ``rhema-lsp ask``'s parser say
the same thing: ``--yes`` and ``--trust-project`` exist, each documented,
and ``--yes`` is never said to trust the project."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from rhema_lsp.cli import build_parser

README = Path(__file__).resolve().parents[3] / "README.md"
HEADER = "| answering flag | answers | otherwise |"


def readme_rows() -> dict[str, str]:
    lines = README.read_text(encoding="utf-8").splitlines()
    rows = {}
    for line in lines[lines.index(HEADER) + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1]
    return rows


def ask_flags() -> dict[str, argparse.Action]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices["ask"]._option_string_actions)
    raise AssertionError("no subcommands")


def test_the_readme_table_lists_the_answering_flags_of_ask() -> None:
    rows = readme_rows()
    assert list(rows) == ["--yes", "--trust-project"]
    flags = ask_flags()
    for flag in rows:
        assert flag in flags
        assert flags[flag].default is False  # off unless given


def test_yes_answers_actions_and_only_trust_project_answers_trust() -> None:
    rows = readme_rows()
    assert "Use them this time" in rows["--trust-project"]
    assert not re.search(r"trust|\.mcp\.json", rows["--yes"])
    assert "never trust" in (ask_flags()["--yes"].help or "")
    assert "untrusted pull request" in (ask_flags()["--trust-project"].help or "")
