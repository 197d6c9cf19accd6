"""The clients' generated tables: every tool's facts, one per tool of the
specs, reach the VS Code and Neovim clients without a hand edit, and
``python -m rhema_lsp.contract --check`` fails when a table is behind."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import rhema_lsp.tools.facts as tool_facts
from rhema_lsp.clients.settings import (
    SETTINGS_TS_PATH,
    SettingFacts,
    setting_facts,
    typescript_settings,
)
from rhema_lsp.clients.tables import (
    LUA_PATH,
    TOOLS_TS_PATH,
    lua_facts,
    protocol_tools,
    typescript_tools,
)
from rhema_lsp.contract.__main__ import every_artefact, main
from rhema_lsp.contract.generate import PROTOCOL_PATH
from rhema_lsp.runs.skills import SKILL, SkillArgs
from rhema_lsp.runs.subagents import TASK, TaskArgs
from rhema_lsp.tools.arguments import ToolArguments
from rhema_lsp.tools.facts import TOOL_FACTS, ToolFacts
from rhema_lsp.tools.planning import UPDATE_PLAN, UpdatePlan
from rhema_lsp.tools.specs import _BY_MODE, _EDIT, TOOLS_BY_MODE

REPO = Path(__file__).resolve().parents[3]
FAKE = ToolFacts("fake_move", "Fake-move", "move", main="source", target="dest", changes_files=True)


def test_every_tool_offered_has_its_facts_in_the_order_offered() -> None:
    assert [facts.name for facts in TOOL_FACTS] == [
        *TOOLS_BY_MODE["agent"],
        UPDATE_PLAN,
        SKILL,
        TASK,
    ]


@pytest.mark.parametrize("facts", TOOL_FACTS, ids=lambda facts: facts.name)
def test_a_tools_main_and_target_are_its_arguments(facts: ToolFacts) -> None:
    own: dict[str, type[ToolArguments]] = {
        UPDATE_PLAN: UpdatePlan,
        SKILL: SkillArgs,
        TASK: TaskArgs,
    }
    found = [m for m in _BY_MODE["agent"] if m.tool_name == facts.name]
    model = found[0] if found else own[facts.name]
    names = {info.alias or name for name, info in model.model_fields.items()}
    assert {facts.main, facts.target} - {None} <= names
    assert facts.changes_files == (model in _EDIT)


def test_a_new_tool_reaches_both_clients_tables() -> None:
    ts, lua = typescript_tools(), lua_facts()
    assert "fake_move" not in ts and "fake_move" not in lua
    tools = (*TOOL_FACTS, FAKE)
    ts, lua = typescript_tools(tools), lua_facts(tools)
    row = "| `fake_move` | `source` → `dest` | yes | `move` | Fake-move … |"
    assert row in protocol_tools(tools)
    assert (
        "  fake_move: { title: 'Fake-move', kind: 'move', main: 'source', target: 'dest', "
        "changesFiles: true },"
    ) in ts
    assert "'rename_symbol', 'fake_move']);" in ts  # FILE_TOOLS
    assert (
        "  fake_move = { title = 'Fake-move', kind = 'move', main = 'source', target = 'dest', "
        "changes_files = true },"
    ) in lua


def test_rename_symbol_changes_files_in_both_clients() -> None:
    ts = (REPO / TOOLS_TS_PATH).read_text(encoding="utf-8")
    lua = (REPO / LUA_PATH).read_text(encoding="utf-8")
    file_tools = ts[ts.index("export const FILE_TOOLS") :]
    assert "'rename_symbol'" in file_tools
    assert "rename_symbol = { title = 'Rename symbol in', kind = 'edit', main = 'path'," in lua


def test_the_check_fails_when_a_tool_is_added_and_passes_once_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for artefact in every_artefact():
        (tmp_path / artefact.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / artefact.path, tmp_path / artefact.path)
    monkeypatch.chdir(tmp_path)
    assert main(["--check"]) == 0

    monkeypatch.setattr(tool_facts, "TOOL_FACTS", (*TOOL_FACTS, FAKE))
    assert main(["--check"]) == 1
    stale = capsys.readouterr().err
    assert f"{TOOLS_TS_PATH} is not current" in stale
    assert f"{LUA_PATH} is not current" in stale
    assert f"{PROTOCOL_PATH} is not current" in stale
    assert "contract.ts" not in stale

    assert main([]) == 0
    assert main(["--check"]) == 0
    assert "fake_move" in (tmp_path / TOOLS_TS_PATH).read_text(encoding="utf-8")
    assert "fake_move = {" in (tmp_path / LUA_PATH).read_text(encoding="utf-8")
    assert "| `fake_move` |" in (tmp_path / PROTOCOL_PATH).read_text(encoding="utf-8")
    assert "| `fake_move` |" not in (REPO / PROTOCOL_PATH).read_text(encoding="utf-8")


def test_the_lua_tables_name_every_command_and_setting() -> None:
    lua = lua_facts(commands=("rhema.turn", "rhema.openSession"), settings={"maxSteps": 25})
    assert "  turn = 'rhema.turn',\n  openSession = 'rhema.openSession',\n}" in lua
    assert "  maxSteps = 25,\n}" in lua
    assert "  provider = vim.NIL," in lua_facts()


def test_a_title_with_a_quote_stays_one_literal() -> None:
    quoted = ToolFacts("odd", "Don't \\ stop", "other")
    assert "odd: { title: 'Don\\'t \\\\ stop', kind: 'other'" in typescript_tools((quoted,))
    assert "odd = { title = 'Don\\'t \\\\ stop', kind = 'other'" in lua_facts((quoted,))


def test_the_extension_gets_each_settings_default_choices_and_bounds() -> None:
    facts = {setting.name: setting for setting in setting_facts()}
    assert facts["maxSteps"] == SettingFacts("maxSteps", 25, (), 1, 500)
    assert facts["provider"].choices[-1] == "custom" and "ollama" in facts["provider"].choices
    assert facts["protocol"].default is None
    ts = typescript_settings([SettingFacts("maxSteps", 30, (), 1, 400)])
    assert "  maxSteps: { default: 30, min: 1, max: 400 },\n} as const;" in ts
    current = (REPO / SETTINGS_TS_PATH).read_text(encoding="utf-8")
    assert "  maxSteps: { default: 25, min: 1, max: 500 }," in current
