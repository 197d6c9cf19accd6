"""The transcript is written beside the store without following a link a
repository carries (``.rhema/transcripts`` pointing elsewhere)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from rhema_lsp.engine import TextDelta
from rhema_lsp.server.transcript import Transcript


async def test_the_transcript_is_written_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / ".rhema" / "transcripts" / "s1.md"
    (tmp_path / ".rhema").mkdir()
    first = Transcript(path, 1, "What is it?")
    await first.open()
    first.emit(TextDelta(text="an answer"))
    await first.flush()
    second = Transcript(path, 2, "And then?")
    await second.open()
    await second.flush()
    text = path.read_text()
    assert text.startswith("# Rhema session s1")
    assert "> What is it?" in text
    assert "an answer" in text
    assert "> And then?" in text


async def test_a_linked_transcripts_folder_is_never_written_through(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store_dir = tmp_path / ".rhema"
    store_dir.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (store_dir / "transcripts").symlink_to(elsewhere, target_is_directory=True)
    transcript = Transcript(store_dir / "transcripts" / "s1.md", 1, "hi")
    with caplog.at_level(logging.WARNING):
        await transcript.open()
        transcript.emit(TextDelta(text="answer"))
        await transcript.flush()
    assert list(elsewhere.iterdir()) == []
    assert any("symbolic link" in record.getMessage() for record in caplog.records)
