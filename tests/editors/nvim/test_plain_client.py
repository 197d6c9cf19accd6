"""Neovim without our plugin, as a plain LSP client (``vim.lsp.config`` with
the server's command and settings, nothing declared): its asks are one
conversation. The second ask continues the first's session (the model hears
the first question), and the session's one transcript is shown in the same
window each turn, not in a new split per turn."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer, text_reply

BODY = r"""
local spec = vim.json.decode([==[%s]==])
vim.lsp.config('rhema-plain', {
  cmd = spec.cmd,
  filetypes = { 'python' },
  root_markers = { '.git' },
  init_options = spec.settings,
})
vim.lsp.enable('rhema-plain')
vim.cmd.edit(T.workspace .. '/hello.py')
T.wait('the server to attach', function()
  local c = vim.lsp.get_clients({ name = 'rhema-plain', bufnr = 0 })[1]
  return c ~= nil and c.initialized == true
end)
local client = vim.lsp.get_clients({ name = 'rhema-plain' })[1]
local function ask(prompt, answer)
  local response = client:request_sync('workspace/executeCommand', {
    command = 'rhema.turn', arguments = { { prompt = prompt } },
  }, 20000)
  assert(response and not response.err, vim.inspect(response))
  T.wait('the closing message of ' .. prompt, function()
    return vim.fn.execute('messages'):find(answer, 1, true) ~= nil
  end)
  T.wait('the transcript to be shown', function()
    return #vim.api.nvim_list_wins() > 1
  end)
  return response.result
end
local r = {}
r.first = ask('My name is Ann.', 'Hello Ann.')
r.windows_after_first = #vim.api.nvim_list_wins()
r.second = ask('What is my name?', 'Your name is Ann.')
-- showDocument is handled before the closing message (sent first, handled in order):
-- a split for a second transcript would be here by now.
r.windows_after_second = #vim.api.nvim_list_wins()
r.buffers = {}
for _, win in ipairs(vim.api.nvim_list_wins()) do
  table.insert(r.buffers, vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)))
end
T.result = r
"""


def test_plain_neovim_asks_are_one_conversation_in_one_transcript_window(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.script(text_reply("Hello Ann."), text_reply("Your name is Ann."))
    spec = {
        "cmd": [sys.executable, "-m", "rhema_lsp"],
        "settings": settings_for(fake.base_url, mode="ask"),
    }

    r = run_nvim(BODY % json.dumps(spec), workspace=workspace, tmp_path=tmp_path, settings=None)

    first, second = r["first"], r["second"]
    assert second == {"session": first["session"], "turn": 2, "started": True}
    said = [str(m["content"]) for m in fake.requests[1]["messages"] if m["role"] == "user"]
    assert any("My name is Ann." in content for content in said)
    transcript = workspace / ".rhema" / "transcripts" / f"{first['session']}.md"
    assert sorted((workspace / ".rhema" / "transcripts").glob("*.md")) == [transcript]
    text = transcript.read_text(encoding="utf-8")
    assert "My name is Ann." in text and "Your name is Ann." in text
    # One window for the transcript, reused: not a split per turn.
    assert r["windows_after_first"] == r["windows_after_second"] == 2
    assert sorted(r["buffers"]) == sorted([str(workspace / "hello.py"), str(transcript)])
