"""``rhema-lsp serve`` as a child process, fed raw bytes: headers as any
client writes them are read, an unreadable frame ends the process with 1
(saying why, once, without a traceback), the exit codes are LSP's, a client
leaving while the server waits on it (the settings asked at ``initialized``)
ends quietly, and a
bounded fuzz of envelopes, commands and frames leaves no traceback on
stderr while every message gets its answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rhema_lsp.contract import COMMANDS
from tests.fakes.hostile import BAD_FRAMES, Pools, command_args, envelopes, examples, lsp_frames
from tests.fakes.in_process import ChildPeer, Frames, child_env
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.server.wire_harness import LspClient


class ServeChild(Frames, LspClient, ChildPeer):
    """``python -m rhema_lsp serve``, driven as an LSP client."""


def settings_for(model: FakeModelServer) -> dict[str, Any]:
    return {
        "provider": "custom",
        "protocol": "openai",
        "baseUrl": model.base_url,
        "model": "fake-model",
        "clientCapabilities": {"events": True},
    }


@pytest.fixture
def model() -> Iterator[FakeModelServer]:
    with FakeModelServer(wire="openai", responder=lambda body: text_reply("Done.")) as server:
        yield server


@pytest.fixture
def child(tmp_path: Path) -> Iterator[ServeChild]:
    server = ServeChild(["serve"], tmp_path / "stderr.log", child_env(tmp_path))
    yield server
    server.stop()


def status(msg_id: Any) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": msg_id,
            "method": "workspace/executeCommand",
            "params": {"command": "rhema.status", "arguments": [{}]},
        }
    ).encode()


def test_lowercase_headers_and_lf_line_ends_are_served(
    child: ServeChild, model: FakeModelServer, tmp_path: Path
) -> None:
    child.initialize(settings_for(model), [tmp_path])
    body = status("lf")

    child.send_bytes(b"content-length: %d\n\n" % len(body) + body)

    assert child.response("lf")["result"]["version"]


@pytest.mark.parametrize("bad", BAD_FRAMES)
def test_an_unreadable_frame_exits_1_saying_why_once_without_a_traceback(
    child: ServeChild, model: FakeModelServer, tmp_path: Path, bad: bytes
) -> None:
    child.initialize(settings_for(model), [tmp_path])

    child.send_bytes(bad)

    assert child.wait_exit() == 1
    fatal = [m for m in child.messages if m.get("id") is None and "error" in m]
    assert [m["error"]["code"] for m in fatal] == [-32700]
    assert "Traceback" not in child.stderr()
    said = [  # the log goes to the editor while it is connected, else to stderr
        m["params"]["message"]
        for m in child.messages
        if m.get("method") == "window/logMessage" and "exiting" in m["params"]["message"]
    ]
    assert len(said) + child.stderr().count("exiting") == 1


def test_exit_without_shutdown_exits_1_and_after_it_0(
    model: FakeModelServer, tmp_path: Path
) -> None:
    codes = []
    for polite in (False, True):
        server = ServeChild(["serve"], tmp_path / "stderr.log", child_env(tmp_path))
        server.initialize(settings_for(model), [tmp_path])
        if polite:
            assert server.request("shutdown")["result"] is None
            late = server.command("rhema.status")
            assert late["error"]["code"] == -32600
        server.notify("exit")
        codes.append(server.wait_exit())

    assert codes == [1, 0]
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()


def never_answers_configuration(request: dict[str, Any]) -> Any:
    """A client that never answers ``workspace/configuration`` (a harmless
    notification goes instead of the answer)."""
    if request["method"] == "workspace/configuration":
        return {"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}}
    return None


@pytest.mark.parametrize("how", ["stdin-end", "shutdown"])
def test_a_client_leaving_while_the_settings_are_asked_ends_quietly(
    model: FakeModelServer, tmp_path: Path, how: str
) -> None:
    log = tmp_path / "stderr.log"
    server = ServeChild(["serve"], log, child_env(tmp_path), answer=never_answers_configuration)
    server.initialize(
        settings_for(model), [tmp_path], capabilities={"workspace": {"configuration": True}}
    )
    server.wait_for(
        lambda: any(r["method"] == "workspace/configuration" for r in server.server_requests)
    )
    if how == "shutdown":
        assert server.request("shutdown")["result"] is None
    server.send_bytes(b"")  # the client is gone
    assert server.wait_exit() == (0 if how == "shutdown" else 1)
    stderr = log.read_text()
    assert "Traceback" not in stderr
    assert "CancelledError" not in stderr
    assert "Exception in callback" not in stderr


def test_a_command_before_initialize_is_refused_and_the_capabilities_then_hold(
    child: ServeChild, model: FakeModelServer, tmp_path: Path
) -> None:
    early = child.command("rhema.status")

    assert early["error"]["code"] == -32002
    child.initialize(settings_for(model), [tmp_path])
    turn = child.command("rhema.turn", {"prompt": "hi"})
    assert turn["result"]["stopReason"] == "end_turn"
    assert [m for m in child.messages if m.get("method") == "rhema/event"]


# -- a bounded fuzz against the real process ----------------------------------------------


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeChild, Pools]]:
    root = tmp_path_factory.mktemp("serve-fuzz")
    workspace = root / "project"
    workspace.mkdir()
    (workspace / "hello.py").write_text("x = 1\n")
    with FakeModelServer(wire="openai", responder=lambda body: text_reply("Done.")) as model:
        server = ServeChild(
            ["serve"],
            root / "stderr.log",
            child_env(root),
            answer=lambda r: {"applied": True} if r["method"] == "workspace/applyEdit" else None,
        )
        server.initialize(settings_for(model), [workspace])
        session = server.command("rhema.turn", {"prompt": "first"})["result"]["session"]
        yield server, Pools(workspace, [session])
        server.stop()
        assert server.exit_code == 0


METHODS = ["workspace/executeCommand", "textDocument/codeAction", "initialize", "custom/thing"]


@settings(max_examples=examples(40))
@given(data=st.data())
def test_fuzzed_messages_are_all_answered_and_stderr_has_no_traceback(
    fuzzed: tuple[ServeChild, Pools], data: st.DataObject
) -> None:
    server, pools = fuzzed
    kind = data.draw(st.sampled_from(["envelope", "command", "frames"]))
    msg_id = 9_000_000 + len(server.messages)
    if kind == "envelope":
        message = data.draw(envelopes(METHODS, msg_id))
        server.send(message)
        if isinstance(message, dict) and message.get("id") == msg_id:
            assert "error" in server.response(msg_id)
    elif kind == "command":
        name = data.draw(st.sampled_from([spec.name for spec in COMMANDS]))
        args = data.draw(command_args(name, pools))
        answer = server.request("workspace/executeCommand", {"command": name, "arguments": [args]})
        assert "result" in answer or answer["error"]["code"] in (-32602, -32803), answer
    else:
        frames = b"".join(data.draw(lsp_frames(status(msg_id + i))) for i in range(3))
        cut = data.draw(st.integers(1, len(frames) - 1))
        server.send_bytes(frames[:cut])
        server.send_bytes(frames[cut:])
        for i in range(3):
            assert server.response(msg_id + i)["result"]["version"]

    assert server.command("rhema.status")["result"]["version"]
    assert "Traceback" not in server.stderr()
