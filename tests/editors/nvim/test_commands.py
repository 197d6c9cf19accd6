"""The user's own slash commands, skills and subagents in real Neovim: the
chat's ``<C-x><C-o>`` at ``/`` offers a workspace's
``.claude/commands/greet.md`` and its skills beside the MCP servers' prompts
(the server lists them in ``rhema.mcpPrompts``), and ``/greet Ann`` sent
from the chat reaches the model as the command's template, filled in. Then
(the same Neovim) a ``task`` call's subagent shows nested under the task's
line while it streams, ``:RhemaCancelTask`` stops that child alone, and the
parent turn goes on to its answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rhema_lsp.runs.child_runs import CANCELLED
from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

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
local runs = require('rhema.runs')
runs.last['rhema.turn'] = nil
vim.cmd('RhemaAsk Find greet.')
T.wait_panel_text('the child streaming', 'CHILD-PARTIAL')
r.live = T.lines(require('rhema').panel_buffer())
vim.cmd('RhemaCancelTask')
T.wait('the parent turn', function() return runs.last['rhema.turn'] ~= nil end)
T.idle()
T.wait_panel_text('the parent answer', 'The parent carried on.')
r.after = T.lines(require('rhema').panel_buffer())
r.turn = runs.last['rhema.turn']
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
    fake.script(
        text_reply("Hello, Ann!"),
        tool_reply(("task", {"description": "find greet", "prompt": "CHILD: find greet"})),
        tool_reply(("read_file", {"path": "hello.py"})),
        text_reply("CHILD-PARTIAL answer and then much more", chunk=14, hold=2),
        text_reply("The parent carried on."),
    )

    try:
        r: dict[str, Any] = run_nvim(
            COMMANDS, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
        )
    finally:
        fake.release()

    words = {item["word"]: item for item in r["items"]}
    assert {"/greet", "/tidy"} <= set(words)
    assert words["/greet"]["info"] == "Greet someone"
    request = fake.requests[0]
    users = [m["content"] for m in request["messages"] if m["role"] == "user"]
    assert users[-1] == "Greet Ann warmly."

    live = "\n".join(r["live"])
    task_line = next(line for line in r["live"] if line.startswith("▸ task"))
    assert "running" in task_line
    assert "│ ↳ subagent " in live and "running · :RhemaCancelTask" in live
    assert "│ ▸ read_file hello.py · ✓" in live and "│ CHILD-PARTIAL" in live
    after = "\n".join(r["after"])
    assert "↳ subagent " in after and " · cancelled" in after
    assert r["turn"]["stopReason"] == "end_turn"
    tool = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool[-1]["content"].startswith(CANCELLED)
