from __future__ import annotations
from pathlib import Path
from typing import Any
import pytest
from tests.editors.vscode.conftest import VSCode
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

pytestmark = pytest.mark.timeout(900)

@pytest.mark.parametrize("extra_settings", [{"rhema.review": True}])
def test_scratch(vscode: VSCode, model: FakeModelServer, extra_settings: dict[str, Any]) -> None:
    (vscode.workspace / "v.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\n")
    model.script(tool_reply(("write_file", {"path": "v.py", "content": "a = 10\nb = 2\nc = 30\nd = 40\n"})), text_reply("done"))
    out = Path("/tmp/wt15_scratch"); out.mkdir(exist_ok=True)
    steps = vscode.drive([
        {"openFile": "hello.py"},
        {"command": "Rhema: Ask"},
        {"input": "Change v.py", "title": "Rhema: Ask"},
        {"sleepMs": 6000},
        {"screenshot": str(out / "preview.png")},
        {"dump": ".monaco-workbench", "file": str(out / "wb.html")},
    ], timeout_s=90)
    print(vscode.channel("Rhema"))
