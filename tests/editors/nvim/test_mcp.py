"""MCP servers in real Neovim, against ``@modelcontextprotocol/server-everything``
and a server that hangs at ``initialize``: the prompts are the chat's slash
commands (completed with ``<C-x><C-o>``, their arguments from the words or
asked), ``:RhemaMcp`` and ``:checkhealth rhema`` show the failed server with
its reason, ``:RhemaMcpRestart`` tries it again, and server-everything's form
is asked field by field (text with ``vim.ui.input``; an optional choice can be
skipped, and is then left out), or refused."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_mcp_reference import EVERYTHING, installed
from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes import mcp_hang
from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply
from tests.unit.mcp.conftest import fake_oauth

pytestmark = pytest.mark.timeout(300)


def mcp_settings(base_url: str, marks: Path) -> dict[str, Any]:
    return settings_for(
        base_url,
        mode="agent",
        mcpServers={
            "everything": {
                "command": "node",
                "args": [installed(EVERYTHING), "stdio"],
                "allow": ["*"],
            },
            "hung": mcp_hang.entry(marks),
        },
    )


def user_texts(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "user"]


SLASH = r"""
vim.cmd('checkhealth rhema')
local r = { health = T.lines(0) }
pcall(vim.cmd, "tabclose")
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
-- <C-x><C-o> at the start of the input: the servers' prompts.
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { '/mcp__everything__ar' })
vim.api.nvim_win_set_cursor(0, { 1, 20 })
r.start = chat.omnifunc(1, '')
r.items = chat.omnifunc(0, '/mcp__everything__ar')
-- The words are the arguments.
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { '/mcp__everything__args-prompt Paris' })
vim.cmd.normal(vim.keycode('<CR>'))
T.wait('the first turn', function() return require('rhema.runs').last['rhema.turn'] ~= nil end)
T.idle()
-- A required argument not given is asked; dismissing it sends nothing.
r.asked = {}
local answers = { 'Lyon', nil }
vim.ui.input = function(opts, on_confirm)
  table.insert(r.asked, opts.prompt)
  on_confirm(table.remove(answers, 1))
end
require('rhema.runs').last['rhema.turn'] = nil
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { '/mcp__everything__args-prompt' })
vim.cmd.normal(vim.keycode('<CR>'))
T.wait('the second turn', function() return require('rhema.runs').last['rhema.turn'] ~= nil end)
T.idle()
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { '/mcp__everything__args-prompt' })
vim.cmd.normal(vim.keycode('<CR>'))
T.wait('the dismissal', function()
  for _, m in ipairs(T.messages) do
    if m.message:find('dismissed', 1, true) then return true end
  end
  return false
end)
r.input_after_dismissal = T.lines(chat.input)
-- :RhemaMcp lists the servers; picking the hung one restarts it.
vim.ui.select = function(items, opts, on_choice)
  r.listed = {}
  for _, item in ipairs(items) do table.insert(r.listed, opts.format_item(item)) end
  for _, item in ipairs(items) do
    if item.name == 'hung' then return on_choice(item) end
  end
end
vim.cmd('RhemaMcp')
T.wait('the restart', function()
  for _, m in ipairs(T.messages) do
    if m.message:find('MCP server hung:', 1, true) then
      r.restarted = m
      return true
    end
  end
  return false
end)
T.result = r
"""


def test_prompts_are_slash_commands_and_a_hung_server_shows_why(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    fake.script(text_reply("Sunny in Paris."), text_reply("Rainy in Lyon."))

    r = run_nvim(
        SLASH,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=mcp_settings(fake.base_url, marks),
        timeout=240,
    )

    health = "\n".join(r["health"])
    assert "OK everything: ready (stdio, " in health
    assert "ERROR hung: failed (stdio" in health and "did not finish starting" in health
    assert ":RhemaMcpRestart hung tries it again" in health
    assert r["start"] == 0
    assert [item["word"] for item in r["items"]] == ["/mcp__everything__args-prompt"]
    assert r["items"][0]["menu"] == "city [state]"
    assert user_texts(fake.requests[0])[-1] == "What's weather in Paris?"
    assert user_texts(fake.requests[1])[-1] == "What's weather in Lyon?"
    assert r["asked"][0] == "/mcp__everything__args-prompt city (Name of the city): "
    assert len(fake.requests) == 2  # the dismissed one sent nothing
    assert r["input_after_dismissal"] == ["/mcp__everything__args-prompt"]
    assert any(line.startswith("everything: ready (stdio, ") for line in r["listed"])
    # Failed, or starting again: a turn tries a failed server once more
    # without waiting for it (it joins the run if it comes up).
    hung = ("hung: failed (stdio", "hung: starting (stdio")
    assert any(line.startswith(hung) for line in r["listed"]), r["listed"]
    assert r["restarted"]["message"].startswith("rhema: MCP server hung: failed (stdio")
    assert r["restarted"]["level"] == 3  # vim.log.levels.WARN
    starts = (marks / "starts").read_text().split()
    assert len(starts) >= 3  # the health check, the first turn, the restart


FORM = r"""
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
local r = { selects = {}, inputs = {}, offered = {} }
local choices = {
  Boolean = 'Yes',
  ['Untitled Single Select Enum'] = 'Joey',
  ['Titled Single Select Enum'] = 'Skip',
}
vim.ui.select = function(items, opts, on_choice)
  table.insert(r.selects, opts.prompt)
  local titles = {}
  for _, item in ipairs(items) do
    table.insert(titles, type(item) == 'table' and item.title or item)
  end
  r.offered[opts.prompt] = titles
  for _, item in ipairs(items) do
    local title = type(item) == 'table' and item.title or item
    if opts.prompt:find('asks:', 1, true) and title == T.answer then return on_choice(item) end
    -- The review of every answer, before they are sent.
    if opts.prompt:find('Send to the MCP server', 1, true) and title == 'Send' then
      return on_choice(item)
    end
    for field, choice in pairs(choices) do
      if opts.prompt:find(': ' .. field .. ':', 1, true) and title == choice then
        return on_choice(item)
      end
    end
  end
  on_choice(items[1])
end
local texts = { ['String — '] = 'Ada Lovelace', ['Integer (a whole number)'] = '7' }
vim.ui.input = function(opts, on_confirm)
  table.insert(r.inputs, { opts.prompt, opts.default })
  for start, value in pairs(texts) do
    if opts.prompt:find('everything: ' .. start, 1, true) then return on_confirm(value) end
  end
  on_confirm('')
end
vim.cmd('RhemaAsk Fill the form')
T.wait('the turn', function() return require('rhema.runs').last['rhema.turn'] ~= nil end, 60000)
T.idle()
T.result = r
"""


@pytest.mark.parametrize("answer", ["Answer", "Deny"])
def test_a_servers_form_is_asked_field_by_field_or_refused(
    workspace: Path, fake: FakeModelServer, tmp_path: Path, answer: str
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    fake.script(tool_reply(("everything__trigger-elicitation-request", {})), text_reply("Thanks."))

    r = run_nvim(
        f"T.answer = {answer!r}\n{FORM}",
        workspace=workspace,
        tmp_path=tmp_path,
        settings=mcp_settings(fake.base_url, marks),
        timeout=240,
    )

    result = str(fake.requests[1]["messages"][-1]["content"])
    assert r["selects"][0].startswith(
        "The MCP server everything asks: Please provide inputs for the following fields:"
    )
    if answer == "Deny":
        assert "declined" in result and r["inputs"] == []
        return
    review = [p for p in r["selects"] if p.startswith("Send to the MCP server everything")]
    assert len(review) == 1 and "Ada Lovelace" in review[0], r["selects"]  # reviewed, then sent
    assert "- Name: Ada Lovelace" in result and "- Favorite Integer: 7" in result
    assert "- Agreed to terms: true" in result
    assert '"untitledSingleSelectEnum": "Joey"' in result
    # An optional choice field offers Skip, and a skipped one is left out of the answer.
    heroes = next(v for k, v in r["offered"].items() if ": Titled Single Select Enum" in k)
    assert heroes[-2:] == ["Skip", "Cancel"] and "Superman" in heroes
    assert '"titledSingleSelectEnum"' not in result
    assert ["everything: Integer (a whole number) — Your favorite integer (do not give us "
            "your phone number, pin, or other sensitive info): ", "42"] in r["inputs"]  # fmt: skip
    assert ["everything: String with default — Favorite first line of a story: ",
            "It was a dark and stormy night."] in r["inputs"]  # fmt: skip


SIGN_IN = r"""
-- The user's browser: Neovim opens an external page with vim.ui.open; here it
-- notes the page and "opens" it (a command that succeeds), as xdg-open would.
local r = { opened = {} }
vim.ui.open = function(uri)
  table.insert(r.opened, uri)
  return vim.system({ 'true' })
end
vim.cmd.edit(T.workspace .. '/hello.py')
T.attached()
-- Before signing in: the health check and :RhemaStatus say the server waits for the user.
vim.cmd('checkhealth rhema')
r.health = T.lines(0)
pcall(vim.cmd, 'tabclose')
T.wait('the sign-in page to open', function() return #r.opened > 0 end)
local mcp = require('rhema.mcp')
r.waiting = mcp.status_lines(T.command('rhema.status'))
-- The user signs in on the page: the browser follows its redirects to rhema's loopback.
local signed = vim.system({ T.python, '-c', T.BROWSER, r.opened[1] }, { text = true }):wait(30000)
r.signed = vim.trim(signed.stdout or '') .. vim.trim(signed.stderr or '')
T.wait('the server to be ready', function()
  local status = T.command('rhema.status')
  return status.mcpServers[1].state == 'ready'
end, 60000)
r.ready = mcp.status_lines(T.command('rhema.status'))
-- The agent calls the protected tool.
vim.cmd('RhemaAsk Who is signed in?')
T.wait('the turn', function() return require('rhema.runs').last['rhema.turn'] ~= nil end, 60000)
T.idle()
T.result = r
"""

BROWSER = (
    "import httpx, sys; page = httpx.get(sys.argv[1], follow_redirects=True, timeout=30); "
    "print(page.status_code, page.text.strip()[:80])"
)


def test_a_server_that_needs_a_sign_in_opens_the_page_waits_then_serves(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    server = fake_oauth(marks)
    server.start()
    url = f"http://127.0.0.1:{server.port}/mcp"
    fake.script(tool_reply(("locked__secret", {})), text_reply("You are signed in."))
    settings = settings_for(
        fake.base_url, mode="agent", mcpServers={"locked": {"url": url, "allow": ["*"]}}
    )
    try:
        r = run_nvim(
            f"T.python = {sys.executable!r}\nT.BROWSER = {BROWSER!r}\n{SIGN_IN}",
            workspace=workspace,
            tmp_path=tmp_path,
            settings=settings,
            timeout=240,
        )
    finally:
        server.stop()

    health = "\n".join(r["health"])
    assert "WARNING locked: waiting for you to sign in (http" in health, health
    assert "sign in on the page; :RhemaMcpRestart locked asks again" in health
    (page,) = r["opened"]
    assert page.startswith(f"http://127.0.0.1:{server.port}/authorize?"), page
    (waiting,) = r["waiting"]
    assert waiting.startswith("MCP locked: waiting for you to sign in (http"), waiting
    assert r["signed"].startswith("200") and "Signed in" in r["signed"], r["signed"]
    assert r["ready"] == ["MCP locked: ready (http, 1 tool)"]
    assert str(fake.requests[1]["messages"][-1]["content"]) == (
        "signed in: the protected tool answered"
    )
    tokens = tmp_path / "xdg" / "state" / "rhema-lsp"
    assert [p for p in tokens.rglob("*") if p.is_file() and "access_token" in p.read_text()]
    assert not list(workspace.rglob("*token*"))  # never in the workspace
