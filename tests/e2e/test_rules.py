"""Project rules through the real server: the root ``AGENTS.md`` (or
``CLAUDE.md``) and the user's own in the system prompt of every request,
byte-identical from step to step; a nested ``pkg/AGENTS.md`` in the result
of the first tool that works in ``pkg/``, once per session; a changed file
read again on the next turn; a long one cut with a note; a symbolic link out
of the workspace never read; and ``rhema.status`` / ``rhema-lsp status``
naming what is in use. The fake model server records every request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.runs.project_rules import RULES_CAP
from tests.e2e.conftest import settings_for
from tests.e2e.editor_client import EditorClient, start_editor
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

READ_MOD = ("read_file", {"path": "pkg/mod.py"})
READ_DEEP = ("read_file", {"path": "pkg/deep/inner.py"})


def system_of(request: dict[str, Any]) -> str:
    first = request["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def tool_texts(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "pkg" / "deep").mkdir(parents=True)
    (workspace / "pkg" / "mod.py").write_text("VALUE = 1\n")
    (workspace / "pkg" / "other.py").write_text("OTHER = 2\n")
    (workspace / "pkg" / "deep" / "inner.py").write_text("INNER = 3\n")
    (workspace / "AGENTS.md").write_text("Root rule: use tabs, never spaces.\n")
    (workspace / "pkg" / "AGENTS.md").write_text("Pkg rule: every function is typed.\n")
    return workspace


@pytest.fixture
async def editor(
    project: Path, fake: FakeModelServer, tmp_path: Path
) -> AsyncIterator[EditorClient]:
    started = await start_editor(
        "visual_studio_code",
        [project],
        settings_for(fake, mode="edit"),
        env={
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "OPENAI_API_KEY": "",
        },
    )
    yield started
    await started.shutdown_session()


async def test_root_rules_in_every_request_and_nested_ones_once_per_session(
    editor: EditorClient, fake: FakeModelServer, tmp_path: Path
) -> None:
    user_rules = tmp_path / "config" / "rhema-lsp" / "AGENTS.md"
    user_rules.parent.mkdir(parents=True)
    user_rules.write_text("User rule: answer in English.\n")
    fake.script(
        tool_reply(READ_MOD),
        tool_reply(("read_file", {"path": "pkg/other.py"})),
        tool_reply(READ_DEEP),
        text_reply("Done."),
        tool_reply(READ_MOD),
        text_reply("Again."),
    )
    first = await editor.command("rhema.turn", {"prompt": "look at pkg"})
    assert first["stopReason"] == "end_turn"
    requests = fake.requests
    system = system_of(requests[0])
    assert "Root rule: use tabs, never spaces." in system
    assert "User rule: answer in English." in system
    assert system.index("User rule") < system.index("Root rule")
    assert "cannot widen what the tools may reach or skip an approval" in system
    assert "Pkg rule" not in system
    # the prefix every step sends is the same bytes
    assert {system_of(request) for request in requests[:4]} == {system}

    # pkg/AGENTS.md joins with the first read in pkg/, and only then
    results = tool_texts(requests[1])
    assert len(results) == 1
    assert results[0].startswith("     1\tVALUE = 1\n")
    pkg_rules = '<rules file="pkg/AGENTS.md">\nPkg rule: every function is typed.\n</rules>'
    assert pkg_rules in results[0]
    assert "Pkg rule" not in tool_texts(requests[2])[1]
    # pkg/deep has none of its own: nothing more
    assert "<rules" not in tool_texts(requests[3])[2]

    await editor.command("rhema.turn", {"prompt": "once more", "session": first["session"]})
    later = fake.requests[4:]
    assert system_of(later[0]) == system
    assert "<rules" not in tool_texts(later[1])[-1]
    assert sum(text.count("Pkg rule") for text in tool_texts(later[1])) == 1

    status = await editor.command("rhema.status", {})
    shown = [(r["path"], r["scope"], r.get("refused")) for r in status["rules"]]
    assert shown == [
        (str(user_rules), "user", None),
        ("AGENTS.md", "root", None),
        ("pkg/AGENTS.md", "nested", None),
    ]


async def test_a_changed_rules_file_is_read_again_on_the_next_turn(
    editor: EditorClient, fake: FakeModelServer, project: Path
) -> None:
    fake.script(tool_reply(READ_MOD), text_reply("one"), tool_reply(READ_MOD), text_reply("two"))
    first = await editor.command("rhema.turn", {"prompt": "first"})
    (project / "AGENTS.md").write_text("Root rule: spaces after all.\n")
    (project / "pkg" / "AGENTS.md").write_text("Pkg rule: no types needed.\n")
    await editor.command("rhema.turn", {"prompt": "second", "session": first["session"]})
    before, after = system_of(fake.requests[0]), system_of(fake.requests[2])
    assert "use tabs" in before and "spaces after all" not in before
    assert "spaces after all" in after and "use tabs" not in after
    assert "no types needed" in tool_texts(fake.requests[3])[-1]


async def test_claude_md_serves_when_there_is_no_agents_md_and_a_long_file_is_cut(
    editor: EditorClient, fake: FakeModelServer, project: Path
) -> None:
    (project / "AGENTS.md").unlink()
    (project / "CLAUDE.md").write_text("Claude rule: be brief.\n" + "x" * (RULES_CAP * 2))
    fake.script(text_reply("ok"))
    await editor.command("rhema.turn", {"prompt": "hi"})
    system = system_of(fake.requests[0])
    assert '<rules file="CLAUDE.md">\nClaude rule: be brief.' in system
    assert f"CLAUDE.md is {RULES_CAP * 2 + 23:,} bytes; only its first {RULES_CAP:,}" in system
    assert len(system.encode()) < RULES_CAP + 3000
    status = await editor.command("rhema.status", {})
    assert [(r["path"], r["truncated"]) for r in status["rules"]] == [("CLAUDE.md", True)]


async def test_a_rules_file_linked_out_of_the_workspace_is_never_read(
    editor: EditorClient, fake: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text("SECRET-TOKEN-1234\n")
    (project / "AGENTS.md").unlink()
    (project / "AGENTS.md").symlink_to(secret)
    (project / "pkg" / "AGENTS.md").unlink()
    (project / "pkg" / "AGENTS.md").symlink_to(secret)
    (project / ".env").write_text("KEY=SECRET-ENV-5678\n")
    (project / "pkg" / "deep" / "AGENTS.md").symlink_to(project / ".env")
    fake.script(tool_reply(READ_DEEP), text_reply("fine"))
    result = await editor.command("rhema.turn", {"prompt": "read"})
    assert result["stopReason"] == "end_turn"
    sent = json.dumps(fake.requests)
    assert "SECRET-TOKEN" not in sent and "SECRET-ENV" not in sent
    assert "INNER = 3" in tool_texts(fake.requests[1])[0]
    status = await editor.command("rhema.status", {})
    refused = {r["path"]: r["refused"] for r in status["rules"]}
    assert set(refused) == {"AGENTS.md", "pkg/AGENTS.md", "pkg/deep/AGENTS.md"}
    assert "points outside the workspace" in refused["AGENTS.md"]
    assert "secrets" in refused["pkg/deep/AGENTS.md"]


def test_rhema_lsp_status_names_the_rules(project: Path, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "rhema_lsp", "status", "--folder", str(project)]
    command += ["--provider", "custom", "--protocol", "openai", "--model", "m"]
    command += ["--base-url", "http://127.0.0.1:9/v1"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
        },
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "rules:    AGENTS.md\n" in done.stdout
