"""Images from Neovim: in the chat, `#image:path` attaches that file and a
bare `#image` the file name under the cursor; each reaches the model as an
image, byte-exact; a missing one is refused before anything is sent."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.images import images_sent
from tests.fakes.mcp_server import PNG
from tests.fakes.model_server import FakeModelServer, text_reply

GIF = (
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\x00\x00\x00\x00\x00"
    b"!\xf9\x04\x00\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
)
"""A 1x1 GIF."""

IMAGES = r"""
vim.cmd.edit(T.workspace .. '/notes.md')
T.attached()
vim.api.nvim_win_set_cursor(0, { 1, 8 })
vim.cmd('RhemaChat')
local chat = require('rhema.chat')
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { '#image:nope.png what?' })
local r = { refused = chat.send(), refused_input = T.lines(chat.input) }
vim.api.nvim_buf_set_lines(chat.input, 0, -1, false,
  { 'What is wrong in #image:shots/page.png and #image ?' })
r.sent = chat.send()
T.idle()
r.panel = T.panel_lines()
T.result = r
"""


def test_image_mentions_reach_the_model(
    fake: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "shots").mkdir()
    (workspace / "shots" / "page.png").write_bytes(PNG)
    (workspace / "dot.gif").write_bytes(GIF)
    (workspace / "notes.md").write_text("see the dot.gif here\n")
    fake.script(text_reply("The page is blank."))
    r = run_nvim(
        IMAGES,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url, model="fake-vision-model"),
    )
    assert r["refused"] is False
    assert r["refused_input"] == ["#image:nope.png what?"]
    assert r["sent"] is True
    assert len(fake.requests) == 1
    assert images_sent("openai", fake.requests[0]) == [("image/png", PNG), ("image/gif", GIF)]
    assert any("The page is blank." in line for line in r["panel"])
