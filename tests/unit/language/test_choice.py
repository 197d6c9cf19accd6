"""Which command serves a language: the ``languageServers`` setting, then the
user config file's, then the first known server on ``PATH``."""

from __future__ import annotations

from pathlib import Path

from rhema_lsp.language.pool import AgentLanguages
from rhema_lsp.tools import MemoryEditor


def listed(languages: AgentLanguages) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {entry.language: (entry.name, entry.command) for entry in languages.status()}


def test_the_setting_wins_over_the_user_file_which_wins_over_path(tmp_path: Path) -> None:
    reads: list[int] = []

    def user_file() -> dict[str, tuple[str, ...]]:
        reads.append(1)
        return {"python": ("/opt/user-pylsp",), "go": ("/opt/user-gopls", "serve")}

    def which(name: str) -> str | None:
        return f"/usr/bin/{name}" if name in ("gopls", "pylsp", "clangd") else None

    languages = AgentLanguages(
        MemoryEditor([tmp_path]),
        lambda: [tmp_path],
        {"python": ["/opt/setting-pyright", "--stdio"]},
        which,
        user_file=user_file,
    )
    shown = listed(languages)
    assert shown["python"] == ("setting-pyright", ("/opt/setting-pyright", "--stdio"))
    assert shown["go"] == ("user-gopls", ("/opt/user-gopls", "serve"))
    assert shown["c"] == ("clangd", ("/usr/bin/clangd",))
    assert reads == [1]  # read when asked, not kept: an edited file counts at once


def test_without_a_user_file_the_setting_and_path_serve(tmp_path: Path) -> None:
    languages = AgentLanguages(MemoryEditor([tmp_path]), lambda: [tmp_path], {}, lambda name: None)
    assert listed(languages) == {}
