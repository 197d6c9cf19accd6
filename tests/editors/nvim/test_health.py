"""`:checkhealth rhema` reports Neovim, the server and the provider it resolves."""

from __future__ import annotations

from pathlib import Path

from tests.editors.fake_settings import settings_for
from tests.editors.nvim.harness import run_nvim
from tests.fakes.model_server import FakeModelServer

HEALTH = r"""
vim.cmd('checkhealth rhema')
T.result = { lines = T.lines(0), clients = #vim.lsp.get_clients() }
"""


def test_checkhealth_passes_with_the_server_and_a_provider(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    r = run_nvim(
        HEALTH, workspace=workspace, tmp_path=tmp_path, settings=settings_for(fake.base_url)
    )

    text = "\n".join(r["lines"])
    assert "OK Neovim 0.11" in text
    assert 'OK require("rhema").setup() was called' in text
    assert 'OK server command "' in text
    assert "OK rhema-lsp " in text
    assert f"OK provider custom resolved: model fake-model at {fake.base_url}" in text
    assert "ERROR" not in text and "WARNING" not in text


def test_checkhealth_reports_a_missing_server(
    workspace: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    r = run_nvim(
        HEALTH,
        workspace=workspace,
        tmp_path=tmp_path,
        settings=settings_for(fake.base_url),
        setup_extra={"cmd": ["rhema-lsp-not-installed"]},
    )

    text = "\n".join(r["lines"])
    assert "OK Neovim 0.11" in text
    assert 'ERROR server command "rhema-lsp-not-installed" not found' in text
    assert "provider" not in text.split("rhema: server")[-1].split("ERROR")[0]
