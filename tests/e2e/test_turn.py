"""A whole turn through the real server process: read, edit (in the client's
own buffer, in its position encoding), answer; and the event stream."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.editor_client import EditorClient
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply


async def test_a_turn_reads_edits_the_unsaved_buffer_and_answers(
    client: EditorClient, workspace: Path, fake: FakeModelServer
) -> None:
    path = workspace / "hello.py"
    unsaved = 'def greet(name):\n    return "héllo 🌍 " + name  # 未保存\n'
    client.open(path, unsaved)
    fake.script(
        tool_reply(("read_file", {"path": "hello.py"})),
        tool_reply(
            (
                "edit_file",
                {"path": "hello.py", "old_text": '"héllo 🌍 "', "new_text": '"bonjour 🌍 "'},
            )
        ),
        text_reply("Changed the greeting to bonjour.", thinking="The user wants French."),
    )

    result = await client.command("rhema.turn", {"prompt": "Make it French"})

    assert result["stopReason"] == "end_turn"
    assert result["text"] == "Changed the greeting to bonjour."
    assert result["steps"] == 3
    assert (
        client.buffer(path).text == 'def greet(name):\n    return "bonjour 🌍 " + name  # 未保存\n'
    )
    assert path.read_text() == 'def greet(name):\n    return "hello " + name\n'  # nothing on disk
    # the model read the unsaved text, not the file
    read_result = fake.requests[1]["messages"][-1]["content"]
    assert "héllo 🌍" in read_result
    edit = client.state.edits[0]
    assert "edit_file" in (edit.label or "")
    kinds = [e["event"]["type"] for e in client.state.events]
    assert kinds[0] == "step_start"
    assert kinds[-1] == "turn_end"
    assert kinds.count("step_start") == 3
    assert kinds.count("tool_result") == 2
    seqs = [e["seq"] for e in client.state.events]
    assert seqs == list(range(1, len(seqs) + 1))
    thinking = "".join(e["text"] for e in client.events_of("thinking_delta"))
    text = "".join(e["text"] for e in client.events_of("text_delta"))
    assert thinking == "The user wants French."
    assert text == "Changed the greeting to bonjour."
    end = client.events_of("turn_end")[0]
    assert end["stopReason"] == "end_turn"
    assert end["steps"] == 3
