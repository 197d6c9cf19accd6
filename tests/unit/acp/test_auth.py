"""Signing in to the ACP agent: the stored provider choice and its rules.

The choice file is 0600 in the user's config folder and written whole; a
file others can read, a link or hostile contents are ignored; a stored key
reaches the provider only through its variable, the editor's own variable
winning, and is taken back when the choice changes; Agent Auth stores the
first local server that lists a model and fails with -32000 otherwise; the
terminal's setup stores what the user typed and stores nothing on an
answer that names nothing, a refused URL or the end of input; the agent
takes up a choice stored after it started at its next session.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from rhema_lsp.acp.auth import AuthFailed, StoredProvider, key_variables, sign_in_locally
from rhema_lsp.acp.handshake import LOCAL_METHOD, SETUP_METHOD
from rhema_lsp.cli.setup import run_setup
from rhema_lsp.providers.presets import LocalServer
from rhema_lsp.providers.setup import SetupSurvey, build_survey
from rhema_lsp.providers.stored import (
    StoredChoice,
    follows_stored,
    read_choice,
    with_stored,
    write_choice,
)
from rhema_lsp.runs.settings import Settings
from tests.fakes.model_server import FakeModelServer


def test_the_choice_is_written_0600_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "config" / "provider.json"
    choice = StoredChoice("custom", "m", "http://127.0.0.1:9/v1", "openai", "sk-secret-value-1")
    write_choice(choice, path)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    assert read_choice(path) == choice
    assert "sk-secret" not in repr(choice)
    assert list(path.parent.iterdir()) == [path]  # no temporary file left


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[]",
        '{"provider": "nonsense"}',
        '{"provider": "openai", "protocol": "smoke"}',
        '{"provider": 7}',
        '{"provider": "custom", "model": ["a"]}',
    ],
)
def test_a_hostile_choice_file_is_ignored(tmp_path: Path, content: str) -> None:
    path = tmp_path / "provider.json"
    path.write_text(content)
    path.chmod(0o600)
    assert read_choice(path) is None


def test_a_file_others_can_read_or_a_link_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "provider.json"
    write_choice(StoredChoice("openai"), path)
    path.chmod(0o644)
    assert read_choice(path) is None
    link = tmp_path / "link.json"
    target = tmp_path / "target.json"
    write_choice(StoredChoice("openai"), target)
    link.symlink_to(target)
    assert read_choice(link) is None
    assert read_choice(tmp_path / "missing.json") is None


def test_flags_naming_a_provider_are_not_overridden(tmp_path: Path) -> None:
    path = tmp_path / "provider.json"
    write_choice(StoredChoice("custom", "m", "http://127.0.0.1:9/v1", "openai"), path)
    assert not follows_stored({"provider": "openai"})
    assert with_stored({"provider": "openai"}, path) == {"provider": "openai"}
    merged = with_stored({"model": "mine", "mode": "ask", "provider": None}, path)
    assert merged["baseUrl"] == "http://127.0.0.1:9/v1" and merged["model"] == "mine"


def test_a_stored_key_goes_only_to_its_variable_and_the_editors_wins(tmp_path: Path) -> None:
    assert key_variables(StoredChoice("anthropic", key="k1")) == {"ANTHROPIC_API_KEY": "k1"}
    custom = StoredChoice("custom", None, "https://models.example.com:8443/v1", "openai", "k2")
    assert key_variables(custom) == {
        "RHEMA_API_KEY": "k2",
        "RHEMA_KEY_ORIGINS": "https://models.example.com:8443",
    }
    path = tmp_path / "provider.json"
    write_choice(StoredChoice("openai", "gpt-x", key="stored-key"), path)
    env = {"OPENAI_API_KEY": "editor-key"}
    chosen = StoredProvider(Settings(), follow=True, path=path, env=env)
    assert env == {"OPENAI_API_KEY": "editor-key"}
    assert (chosen.settings.provider, chosen.settings.model) == ("openai", "gpt-x")
    env.clear()
    write_choice(StoredChoice("anthropic", key="stored-2"), path)
    assert chosen.refresh()
    assert env == {"ANTHROPIC_API_KEY": "stored-2"}
    write_choice(StoredChoice("custom", None, "https://m.example.com/v1", "openai", "k3"), path)
    env["RHEMA_KEY_ORIGINS"] = "https://mine.example.com"
    assert chosen.refresh()
    assert env == {
        "RHEMA_API_KEY": "k3",
        "RHEMA_KEY_ORIGINS": "https://mine.example.com https://m.example.com:443",
    }
    path.unlink()
    assert chosen.refresh() and not chosen.refresh()
    assert env == {"RHEMA_KEY_ORIGINS": "https://mine.example.com"}
    assert chosen.settings.provider is None
    assert not StoredProvider(Settings(), follow=False, path=path, env=env).refresh()


async def test_agent_auth_stores_the_first_local_server_with_a_model(tmp_path: Path) -> None:
    path = tmp_path / "provider.json"
    with (
        FakeModelServer(wire="openai", models=[]) as empty,
        FakeModelServer(wire="openai", models=["local-7b"]) as server,
    ):
        servers = (LocalServer("ollama", empty.base_url), LocalServer("llamacpp", server.base_url))
        choice = await sign_in_locally(LOCAL_METHOD, path, servers, 2.0)
        assert choice == StoredChoice("llamacpp", "local-7b", server.base_url)
        assert read_choice(path) == choice
        with pytest.raises(AuthFailed, match="lists a model") as failed:
            await sign_in_locally(LOCAL_METHOD, tmp_path / "other.json", servers[:1], 2.0)
        assert failed.value.code == -32000
    for method in (SETUP_METHOD, "x" * 10_000, ""):
        with pytest.raises(AuthFailed):
            await sign_in_locally(method, tmp_path / "never.json", (), 0.1)
    assert not (tmp_path / "never.json").exists()


def _survey(env: dict[str, str] | None = None) -> SetupSurvey:
    return build_survey([], env or {}, configured=False, demo_path=None)


@pytest.mark.parametrize(
    "answers",
    [
        "",  # the input ended
        "99\n",
        "nonsense\n",
        "custom\nftp://example.com\n",
        "custom\nhttp://example.com/v1\n",  # plain http off this machine
        "custom\nhttp://127.0.0.1:9/v1\nsmoke\n",
        "openai\n",  # the input ended before the key
    ],
)
def test_the_terminal_setup_stores_nothing_on_a_bad_answer(
    answers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    out = io.StringIO()
    assert run_setup(io.StringIO(answers), out, survey=_survey()) == 1
    assert "Nothing stored" in out.getvalue()
    assert not (tmp_path / "rhema-lsp" / "provider.json").exists()


def test_the_terminal_setup_stores_a_hosted_choice_and_never_prints_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    out = io.StringIO()
    answers = io.StringIO("anthropic\n\nsk-ant-very-secret\n")
    assert run_setup(answers, out, survey=_survey({"OPENAI_API_KEY": "x"})) == 0
    listing = out.getvalue()
    assert "openai, gpt-4.1-mini (OPENAI_API_KEY is set)" in listing
    assert listing.index("openai,") < listing.index("anthropic,")  # the ready first
    assert "sk-ant" not in listing
    path = tmp_path / "rhema-lsp" / "provider.json"
    stored = json.loads(path.read_text())
    assert stored == {
        "version": 1,
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "key": "sk-ant-very-secret",
    }
    assert os.stat(path).st_mode & 0o077 == 0
