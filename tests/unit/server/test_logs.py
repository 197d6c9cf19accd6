"""The server's log: each record goes to the editor once, and to stderr only when the
editor could not be sent it (an editor shows both in one place: no line twice)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest
from lsprotocol import types

from rhema_lsp.server.logs import EditorLogHandler


class FakeServer:
    def __init__(self) -> None:
        self.protocol = SimpleNamespace(writer=object())
        self.sent: list[types.LogMessageParams] = []
        self.stderr = io.StringIO()

    def window_log_message(self, params: types.LogMessageParams) -> None:
        self.sent.append(params)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    """A connected fake server with the log installed (its stderr: ``stderr``)."""
    root = logging.getLogger("rhema_lsp")
    saved = (list(root.handlers), root.level, root.propagate, EditorLogHandler.current)
    fake = FakeServer()
    EditorLogHandler.install(cast(Any, fake))
    (stderr,) = [h for h in root.handlers if type(h) is logging.StreamHandler]
    stderr.setStream(fake.stderr)
    try:
        yield fake
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        root.propagate = saved[2]
        EditorLogHandler.current = saved[3]


def test_a_record_goes_to_the_editor_once_and_not_to_stderr(
    server: FakeServer,
) -> None:
    EditorLogHandler.set_level("debug")
    logging.getLogger("rhema_lsp.runs.driver").debug("a debug line")
    logging.getLogger("rhema_lsp.server").info("an info line")
    assert [(p.type, p.message) for p in server.sent] == [
        (types.MessageType.Log, "a debug line"),
        (types.MessageType.Info, "an info line"),
    ]
    assert server.stderr.getvalue() == ""


def test_without_a_connection_stderr_keeps_the_record(
    server: FakeServer,
) -> None:
    server.protocol.writer = None
    logging.getLogger("rhema_lsp.server").warning("nobody is listening")
    assert server.sent == []
    assert server.stderr.getvalue() == "rhema-lsp WARNING rhema_lsp.server: nobody is listening\n"


def test_the_level_setting_filters_both(
    server: FakeServer,
) -> None:
    EditorLogHandler.set_level("warning")
    logging.getLogger("rhema_lsp.server").info("hidden")
    server.protocol.writer = None
    logging.getLogger("rhema_lsp.server").info("hidden too")
    assert server.sent == []
    assert server.stderr.getvalue() == ""
