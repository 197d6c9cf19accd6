"""Fixtures shared by the unit tier's wire tests: a workspace folder, and
this process isolated from the machine's keys and user files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.in_process import isolate


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "hello.py").write_text('def greet(name):\n    return "hello " + name\n')
    return folder


@pytest.fixture
def quiet_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key of the machine's, the user's config and state in the test's folder."""
    isolate(monkeypatch, tmp_path)
