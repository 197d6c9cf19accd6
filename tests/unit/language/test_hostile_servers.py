"""Hostile language servers cost a bounded wait, then nothing: one that
hangs (at ``initialize`` or on a question), writes garbage or declares a
huge frame fails its question (garbage and the huge frame at once, not
after a timeout), is killed, restarted once, then refused at once for a
while. Locations outside the workspace reach the model as
``<outside the workspace>``, never as their path."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.engine import ToolCall, ToolContext
from rhema_lsp.language import connection
from rhema_lsp.language.pool import AgentLanguages
from rhema_lsp.tools import LanguageFailed, MemoryEditor, WorkspaceTools

FAKE = Path(__file__).resolve().parents[2] / "fakes" / "language_server.py"

pytestmark = pytest.mark.process  # starts child processes
SOURCE = "def greet(name):\n    return name\n\ngreet('x')\n"


class Scene:
    """A workspace with one Python file, and the fake server's record."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "project"
        self.root.mkdir()
        (self.root / "a.py").write_text(SOURCE)
        self.record = tmp_path / "record.jsonl"
        self.answer = tmp_path / "answer.json"
        self.languages: AgentLanguages | None = None

    def start(self, behaviour: str) -> AgentLanguages:
        command = [sys.executable, str(FAKE), behaviour, str(self.record), str(self.answer)]
        self.answer.write_text("[]")
        self.languages = AgentLanguages(
            MemoryEditor([self.root]), lambda: [self.root], {"python": command}
        )
        return self.languages

    def starts(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    async def ask(self) -> float:
        """Ask for a definition; the seconds it took (it must fail)."""
        assert self.languages is not None
        params = {
            "textDocument": {"uri": (self.root / "a.py").as_uri()},
            "position": {"line": 3, "character": 1},
        }
        began = time.monotonic()
        with pytest.raises(LanguageFailed) as failed:
            await self.languages.request(
                "textDocument/definition", params, uri=(self.root / "a.py").as_uri()
            )
        self.said = str(failed.value)
        return time.monotonic() - began


@pytest.fixture
async def scene(tmp_path: Path) -> AsyncIterator[Scene]:
    made = Scene(tmp_path)
    yield made
    if made.languages is not None:
        await made.languages.aclose()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize(
    ("behaviour", "bound", "said"),
    [
        ("hang", "REQUEST_TIMEOUT", "did not answer within 0.5 s"),
        ("hang-start", "START_TIMEOUT", "did not initialize within 0.5 s"),
        ("garbage", None, "is unusable: it wrote something that is not LSP"),
        ("huge", None, "a frame of 100000000000 bytes"),
    ],
)
async def test_a_hostile_server_fails_restarts_once_then_is_refused_at_once(
    scene: Scene, monkeypatch: pytest.MonkeyPatch, behaviour: str, bound: str | None, said: str
) -> None:
    if bound is not None:
        monkeypatch.setattr(connection, bound, 0.5)
    scene.start(behaviour)
    first = await scene.ask()
    assert said in scene.said
    assert first < 5.0  # garbage and a huge frame: at once, not after the 20 s bound
    second = await scene.ask()
    assert said in scene.said
    assert second < 5.0
    assert len(scene.starts()) == 2  # restarted once
    third = await scene.ask()
    assert "not tried again for" in scene.said and said in scene.said
    assert third < 0.3
    assert len(scene.starts()) == 2
    for start in scene.starts():
        assert _gone(start["pid"])  # killed, not left hanging


async def test_a_well_behaved_server_answers_every_question(scene: Scene) -> None:
    languages = scene.start("ok")
    uri = (scene.root / "a.py").as_uri()
    scene.answer.write_text(
        json.dumps(
            [
                {
                    "uri": uri,
                    "range": {
                        "start": {"line": 0, "character": 4},
                        "end": {"line": 0, "character": 9},
                    },
                }
            ]
        )
    )
    for _ in range(3):
        answer = await languages.request(
            "textDocument/definition",
            {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 1}},
            uri=uri,
        )
        assert answer is not None and answer.result[0]["uri"] == uri
    assert len(scene.starts()) == 1


async def test_locations_outside_the_workspace_reach_the_model_without_their_path(
    scene: Scene, tmp_path: Path
) -> None:
    languages = scene.start("ok")
    secret = tmp_path / "home" / "secret.py"
    secret.parent.mkdir()
    secret.write_text("SENTINEL = 1\n")
    span = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}
    scene.answer.write_text(
        json.dumps(
            [
                {"uri": secret.as_uri(), "range": span},
                {"targetUri": "file:///usr/lib/python3/typing.py", "targetRange": span},
                {"uri": (scene.root / "a.py").as_uri(), "range": span},
            ]
        )
    )
    tools = WorkspaceTools(
        [scene.root], scene.root, "ask", MemoryEditor([scene.root]), language=languages
    )
    for name in ("definition", "references"):
        call = ToolCall(id="c", name=name, args={"path": "a.py", "line": 4, "symbol": "greet"})
        result = await tools.resolve_streaming(call, ToolContext(cwd=scene.root), lambda _c: None)
        assert not result.is_error, result.content
        assert result.content.splitlines()[1:] == [
            "<outside the workspace>",
            "<outside the workspace>",
            "a.py:1: def greet(name):",
        ]
        assert str(tmp_path) + "/home" not in result.content and "/usr/lib" not in result.content
        assert "SENTINEL" not in result.content
