"""A question about a file of no known language (README.md) is answered
``None`` at once by the agent's own language servers, even with a server
running for another language; only a folder-wide question falls back to
the language in play."""

from __future__ import annotations

import sys
import time
from pathlib import Path, PurePath

import pytest

from rhema_lsp.language.pool import AgentLanguages
from rhema_lsp.language.serving import asked_language
from rhema_lsp.tools import MemoryEditor

FAKE = Path(__file__).resolve().parents[2] / "fakes" / "language_server.py"


@pytest.mark.parametrize(
    ("name", "folder_wide", "expected"),
    [
        ("a.py", False, "python"),
        ("README.md", False, None),
        ("notes.txt", False, None),
        ("Makefile", False, None),
        ("weird.py.md", False, None),
        ("..", False, None),
        ("project", True, "python"),
    ],
)
def test_the_question_is_about_the_file_s_language_only(
    name: str, folder_wide: bool, expected: str | None
) -> None:
    path = PurePath("/w") / name
    assert (
        asked_language(path, folder_wide=folder_wide, running=["python"], open_paths=[]) == expected
    )


def test_a_folder_wide_question_takes_the_one_running_language_else_an_open_document() -> None:
    folder = PurePath("/w")
    opened = [PurePath("/w/README.md"), PurePath("/w/main.go")]
    assert asked_language(folder, folder_wide=True, running=[], open_paths=opened) == "go"
    assert asked_language(folder, folder_wide=True, running=["c", "go"], open_paths=[]) is None
    assert asked_language(folder, folder_wide=True, running=["rust"], open_paths=opened) == "rust"


@pytest.mark.process  # starts the fake language server
async def test_readme_diagnostics_do_not_wait_on_the_running_python_server(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / "README.md").write_text("# Helo\n")
    record = tmp_path / "record.jsonl"
    command = [sys.executable, str(FAKE), "ok", str(record)]
    languages = AgentLanguages(MemoryEditor([root]), lambda: [root], {"python": command})
    try:
        python = await languages.diagnostics((root / "a.py").as_uri(), None, wait=5)
        assert python is not None and python.complete
        began = time.monotonic()
        readme = await languages.diagnostics((root / "README.md").as_uri(), None, wait=20)
        assert readme is None
        assert time.monotonic() - began < 0.5
        uri = (root / "README.md").as_uri()
        place = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 2}}
        asked = await languages.request("textDocument/definition", place, uri=uri)
        assert asked is None
    finally:
        await languages.aclose()
