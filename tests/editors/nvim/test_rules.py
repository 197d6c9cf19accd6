"""The panel names the project rules a turn gives the model: one line,
``Rules: AGENTS.md``, completed in place when ``pkg/AGENTS.md`` joins."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

RULES = r"""
require('rhema').ask('Look at pkg.')
T.idle()
T.result = { lines = T.panel_lines() }
"""


def test_the_panel_names_the_rules_in_use(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Use tabs.\n")
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "AGENTS.md").write_text("Type everything.\n")
    (workspace / "pkg" / "mod.py").write_text("VALUE = 1\n")
    fake.script(tool_reply(("read_file", {"path": "pkg/mod.py"})), text_reply("Read it."))

    r = run_nvim(
        RULES, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    rules = [line for line in r["lines"] if line.startswith("Rules: ")]
    assert rules == ["Rules: AGENTS.md, pkg/AGENTS.md"]
    assert "Use tabs." in fake.requests[0]["messages"][0]["content"]
