"""The language tools in real VS Code (code-server), answered by VS Code's own language
features: a TypeScript workspace and VS Code's built-in TypeScript support (no extension to
install). The scripted model calls ``definition``, ``references``, ``symbols``, an
``edit_file`` that breaks a type (its result carries TypeScript's error, for the edited
version), one that fixes it (the error is reported gone), and ``rename_symbol`` across two
files. A Python file, which this VS Code (no Python extension) does not serve, gets its
problems from the server's own basedpyright: the edit that breaks it carries basedpyright's
error, in the tool result and in the chat's tool card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.editors.tool_results import tool_results
from tests.editors.vscode.conftest import VSCode
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

pytestmark = pytest.mark.timeout(900)

CORE = "export function greet(name: string): string {\n  return 'hello ' + name;\n}\n"
USE = "import { greet } from './core';\n\nconsole.log(greet('Ann'));\n"
# TypeScript is up once this file's error shows: the tools then never race its start.
BROKEN = "export const answer: number = 'forty-two';\n"
STATS = "def mean(xs: list[float]) -> float:\n    return sum(xs) / len(xs)\n\n\nmean([1.0])\n"
TSCONFIG = {"compilerOptions": {"strict": True, "target": "es2020", "module": "commonjs"}}


def edit(old: str, new: str) -> tuple[str, dict[str, str]]:
    """An ``edit_file`` call on src/use.ts."""
    return ("edit_file", {"path": "src/use.ts", "old_text": old, "new_text": new})


# The diagnostics wait is spent in full on every edited file whose problems do not change
# (TypeScript reports no set for a clean file, so nothing says it is done): four of them
# here (use.ts before the first edit, both files after the rename, core.ts before it).
# TypeScript is up before the turn (broken.ts's error), and then reports an edit's new
# error within a second or two even on a loaded machine: 8 s leaves room, 20 s cost a minute.
WAIT = {"files.autoSave": "off", "rhema.diagnosticsWait": 8}


@pytest.mark.parametrize("extra_settings", [WAIT])
def test_the_language_tools_are_answered_by_vscodes_typescript(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    ws = vscode.workspace
    (ws / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    (ws / "src").mkdir()
    (ws / "src" / "core.ts").write_text(CORE)
    (ws / "src" / "use.ts").write_text(USE)
    (ws / "src" / "broken.ts").write_text(BROKEN)
    (ws / "stats.py").write_text(STATS)
    model.script(
        tool_reply(
            ("definition", {"path": "src/use.ts", "line": 3, "symbol": "greet"}),
            ("references", {"path": "src/core.ts", "line": 1, "symbol": "greet"}),
            ("symbols", {"query": "", "path": "src/core.ts"}),
        ),
        tool_reply(
            edit("greet('Ann')", "greet(4)"),
            ("edit_file", {"path": "stats.py", "old_text": "mean([1.0])", "new_text": "mean(2)"}),
        ),
        tool_reply(edit("greet(4)", "greet('Bo')")),
        tool_reply(
            (
                "rename_symbol",
                {"path": "src/core.ts", "line": 1, "symbol": "greet", "new_name": "welcome"},
            )
        ),
        text_reply("Renamed greet to welcome."),
    )
    steps = vscode.drive(
        [
            {"openFile": "broken.ts"},
            {"waitFor": ".squiggly-error"},
            {"openFile": "core.ts"},
            {"openFile": "use.ts"},
            {"command": "Rhema: Open Chat"},
            {"waitFor": "#input", "in": "chat"},
            {"click": "#input", "in": "chat"},
            {"typeText": "Where is greet used? Then rename it."},
            {"press": "Enter"},
            {"waitFor": ".end", "in": "chat"},
            {"query": '.tool:has-text("stats.py") pre.result', "in": "chat"},
            {"screenshot": str(artifacts / "language-tools.png")},
            {"command": "File: Save All Files"},
            {"waitFile": str(ws / "src" / "use.ts"), "contains": "welcome('Bo')"},
            {"waitFile": str(ws / "src" / "core.ts"), "contains": "export function welcome("},
        ],
        timeout_s=240,
    )
    results = tool_results(model.requests)
    assert "src/core.ts:1" in results["definition"], results
    assert "src/use.ts:1" in results["references"] and "src/use.ts:3" in results["references"]
    assert "greet" in results["symbols"]
    broken, python, fixed = results["edit_file"], results["edit_file#2"], results["edit_file#3"]
    said = "1 new error: src/use.ts:3: Argument of type 'number' is not assignable"
    assert said in broken, broken
    assert "1 error gone: src/use.ts:3: Argument of type 'number'" in fixed, fixed
    assert "welcome" in results["rename_symbol"]
    # Not VS Code's (it has no Python extension): the server's own basedpyright.
    said = '1 new error: stats.py:5: Argument of type "Literal[2]"'
    assert said in python and "(basedpyright)" in python, python
    [card] = next(step["elements"] for step in steps if "query" in step)
    assert said in card["text"] and "(basedpyright)" in card["text"], card
    assert "import { welcome } from './core';" in (ws / "src" / "use.ts").read_text()
