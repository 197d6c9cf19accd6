"""The system prompt names the tools each mode offers, and no other."""

from __future__ import annotations

from pathlib import Path

import pytest

from rhema_lsp.runs.prompts import system_prompt
from rhema_lsp.tools import TOOLS_BY_MODE

LANGUAGE_TOOLS = ("definition", "references", "symbols", "diagnostics")


@pytest.mark.parametrize("mode", sorted(TOOLS_BY_MODE))
def test_the_prompt_names_the_language_tools_of_the_mode(mode: str) -> None:
    prompt = system_prompt(mode, Path("/w"))
    offered = set(TOOLS_BY_MODE[mode])
    for name in LANGUAGE_TOOLS:
        assert name in offered and name in prompt, (mode, name)
    # rename and the problems after an edit only where edits are possible
    assert ("rename_symbol" in prompt) == ("rename_symbol" in offered)
    assert ("The result of each edit" in prompt) == ("edit_file" in offered)
    assert "{" not in prompt.replace("{path, line, symbol}", "")
