"""The user's own slash commands and skills in real Neovim: the chat's
``<C-x><C-o>`` at ``/`` offers a workspace's ``.claude/commands/greet.md``
and its skills beside the MCP servers' prompts (the server lists them in
``rhema.mcpPrompts``), and ``/greet Ann`` sent from the chat reaches the
model as the command's template, filled in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply

COMMANDS = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
local r = {}
r.items = chat.omnifunc(0, '/')
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { '/greet Ann' })
vim.cmd.normal(vim.keycode('<CR>'))
T.wait('the turn', function() return require('rhema.runs').last['rhema.turn'] ~= nil end)
T.idle()
T.result = r
"""


def test_the_chat_completes_custom_commands_and_sends_them_expanded(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    commands = workspace / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(
        "---\ndescription: Greet someone\nargument-hint: NAME\n---\nGreet $1 warmly.\n"
    )
    skill = workspace / ".claude" / "skills" / "tidy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: tidy\ndescription: Tidy the imports.\n---\nSort them.\n")
    fake.script(text_reply("Hello, Ann!"))

    r: dict[str, Any] = run_nvim(
        COMMANDS, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    words = {item["word"]: item for item in r["items"]}
    assert {"/greet", "/tidy"} <= set(words)
    assert words["/greet"]["info"] == "Greet someone"
    [request] = fake.requests
    users = [m["content"] for m in request["messages"] if m["role"] == "user"]
    assert users[-1] == "Greet Ann warmly."
