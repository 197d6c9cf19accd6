"""The README's settings table, the command line's flags and the server's
settings model say the same thing: the same settings, the same flags, the
same defaults (``--help`` included)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from rhema_lsp.cli import build_parser
from rhema_lsp.cli.flags import ASK_MODE, SETTING_FLAGS, server_default, stated_help
from rhema_lsp.runs.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"
HEADER = "| setting | flag | default | meaning |"


def readme_rows() -> dict[str, tuple[str, str]]:
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER) + 2
    rows: dict[str, tuple[str, str]] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        name = cells[0].strip("`")
        rows[name] = (cells[1], cells[2])
    return rows


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def subcommand(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise AssertionError("no subcommands")


def shown(value: object) -> str | None:
    if value is None or value in ((), {}):
        return None
    if isinstance(value, tuple):
        return ", ".join(str(part) for part in value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def test_every_setting_is_in_the_readme_and_the_flag_table() -> None:
    settings = {info.alias or name for name, info in Settings.model_fields.items()}
    assert set(readme_rows()) == settings
    assert [flag.setting for flag in SETTING_FLAGS] == list(readme_rows())


@pytest.mark.parametrize("item", SETTING_FLAGS, ids=lambda item: item.setting)
def test_the_readme_row_matches_the_flag_and_the_default(item: object) -> None:
    from rhema_lsp.cli.flags import SettingFlag

    assert isinstance(item, SettingFlag)
    flag_cell, default_cell = readme_rows()[item.setting]
    if item.flag is None:
        assert flag_cell.startswith(("editor only", "no flag")), flag_cell
        assert item.why
    else:
        assert ticked(flag_cell)[0] == item.flag
    default = shown(server_default(item.setting))
    values = ticked(default_cell)
    if default is None:
        assert values == [], default_cell
    else:
        assert values[0] == default, default_cell
    if item.setting == "mode":
        assert values[1:] == [ASK_MODE] and "headless" in default_cell


@pytest.mark.parametrize("command", ["ask", "sessions", "status", "acp"])
def test_the_help_states_the_same_defaults(command: str) -> None:
    parser = subcommand(command)
    options = parser._option_string_actions
    help_text = " ".join(parser.format_help().split())
    for item in SETTING_FLAGS:
        if item.flag is None or command not in item.commands:
            assert item.flag not in options
            continue
        action = options[item.flag]
        assert action.default == item.command_defaults.get(command), item.flag
        default = shown(action.default if action.default is not None else None)
        default = default or shown(server_default(item.setting))
        if default is not None:
            assert f"(default: {default})" in " ".join((stated_help(action) or "").split())
        assert item.flag in help_text


def test_the_mode_default_is_ask_headless_and_edit_in_an_editor() -> None:
    assert subcommand("ask")._option_string_actions["--mode"].default == ASK_MODE == "ask"
    assert Settings().mode == "edit"


def first_phrase(text: str) -> str:
    return re.split(r"[;,]", text.replace("`", ""))[0].strip()


def test_help_and_readme_word_every_default_alike() -> None:
    parser = subcommand("ask")
    rows = readme_rows()
    for item in SETTING_FLAGS:
        if item.flag is None:
            continue
        help_text = " ".join((stated_help(parser._option_string_actions[item.flag]) or "").split())
        stated = re.search(r"\(default: ([^)]*)\)", help_text)
        assert stated is not None, item.flag
        readme = first_phrase(rows[item.setting][1])
        if item.setting == "mode":
            assert stated.group(1) == ASK_MODE and readme.startswith("edit in an editor")
        else:
            assert first_phrase(stated.group(1)) == readme, item.flag
