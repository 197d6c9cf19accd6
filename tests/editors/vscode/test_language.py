"""The language tools in real VS Code (code-server), answered by VS Code's own language
features: a TypeScript workspace and VS Code's built-in TypeScript support (no extension to
install). The scripted model calls ``definition``, ``references``, ``symbols``, an
``edit_file`` that breaks a type (its result carries TypeScript's error, for the edited
version), one that fixes it (the error is reported gone), and ``rename_symbol`` across two
files."""

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
TSCONFIG = {"compilerOptions": {"strict": True, "target": "es2020", "module": "commonjs"}}


def edit(old: str, new: str) -> tuple[str, dict[str, str]]:
    """An ``edit_file`` call on src/use.ts."""
    return ("edit_file", {"path": "src/use.ts", "old_text": old, "new_text": new})


@pytest.mark.parametrize("extra_settings", [{"files.autoSave": "off", "rhema.diagnosticsWait": 20}])
def test_the_language_tools_are_answered_by_vscodes_typescript(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    ws = vscode.workspace
    (ws / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    (ws / "src").mkdir()
    (ws / "src" / "core.ts").write_text(CORE)
    (ws / "src" / "use.ts").write_text(USE)
    (ws / "src" / "broken.ts").write_text(BROKEN)
    model.script(
        tool_reply(
            ("definition", {"path": "src/use.ts", "line": 3, "symbol": "greet"}),
            ("references", {"path": "src/core.ts", "line": 1, "symbol": "greet"}),
            ("symbols", {"query": "", "path": "src/core.ts"}),
        ),
        tool_reply(edit("greet('Ann')", "greet(4)")),
        tool_reply(edit("greet(4)", "greet('Bo')")),
        tool_reply(
            (
                "rename_symbol",
                {"path": "src/core.ts", "line": 1, "symbol": "greet", "new_name": "welcome"},
            )
        ),
        text_reply("Renamed greet to welcome."),
    )
    vscode.drive(
        [
            {"openFile": "broken.ts"},
            {"waitFor": ".squiggly-error"},
            {"openFile": "core.ts"},
            {"openFile": "use.ts"},
            {"command": "Rhema: Ask"},
            {"input": "Where is greet used? Then rename it.", "title": "Rhema: Ask"},
            {"waitLog": "Rhema", "contains": "Renamed greet to welcome."},
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
    broken, fixed = results["edit_file"], results["edit_file#2"]
    said = "1 new error: src/use.ts:3: Argument of type 'number' is not assignable"
    assert said in broken, broken
    assert "1 error gone: src/use.ts:3: Argument of type 'number'" in fixed, fixed
    assert "welcome" in results["rename_symbol"]
    assert "import { welcome } from './core';" in (ws / "src" / "use.ts").read_text()
