"""A newcomer's first minutes in real VS Code (code-server), against the real server: with no
provider set up the chat opens on the setup card (never the demo model silently), readable
whole in a 300 px side bar, and writes the chosen setting; the chat has its own activity-bar
view, a keybinding and the status bar item that open it with the caret in the input; "Rhema:
Ask" runs in the chat; a prompt sent while the server cannot start stays in the input with the
error and a Retry, which sends it once the server starts. Screenshots of each state go to
``test-artifacts/vscode/``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.providers import locate_embedded_model
from tests.editors.vscode.conftest import VSCode, user_texts
from tests.fakes.model_server import FakeModelServer, text_reply

pytestmark = pytest.mark.timeout(900)

CHAT = {"in": "chat"}
NOTHING_SET_UP = {f"rhema.{key}": "" for key in ("provider", "baseUrl", "protocol", "model")}
OPEN_CHAT_KEY = "Control+Alt+R"


def chat(step: dict[str, Any]) -> dict[str, Any]:
    return {**step, **CHAT}


def user_settings(vscode: VSCode) -> dict[str, Any]:
    settings: dict[str, Any] = json.loads(vscode.settings_file.read_text())
    return settings


def assert_whole(card: dict[str, Any], parts: list[dict[str, Any]]) -> None:
    """The card shows all of itself, and each of its parts lies inside it (none cut off)."""
    scroll = card["scroll"]
    assert scroll["height"] <= scroll["client"] + 1, scroll  # no part behind a scroll
    assert scroll["width"] <= scroll["clientWidth"] + 1, scroll  # none wider than the card
    box = card["box"]
    assert len(parts) > 10, parts
    for part in parts:
        inner = part["box"]
        assert inner["width"] > 0 and inner["height"] > 0, part
        for start, size in (("x", "width"), ("y", "height")):
            inside = box[start] - 1 <= inner[start]
            inside = inside and inner[start] + inner[size] <= box[start] + box[size] + 1
            assert inside, (part["text"], inner, box)


# No test here edits or saves a workspace file (the settings are written through VS Code's
# configuration API), so auto save changes nothing they do: each runs with code-server's
# default only (the chat, review and rewind tests run with auto save off as well).
@pytest.mark.parametrize("extra_settings", [NOTHING_SET_UP], ids=["nothing-set-up"])
def test_with_nothing_set_up_the_chat_opens_on_the_setup_card_and_writes_the_choice(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    card_shot = artifacts / "setup-card.png"
    broken_shot = artifacts / "setup-card-after-a-choice.png"
    demo = locate_embedded_model() is not None
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"waitFor": "#setup h2", "hasText": "Choose a model provider"}),
            # In a 300 px side bar the card is whole: nothing cut off, nothing behind a scroll.
            {"resizeSideBar": 300},
            chat({"waitFor": "#setup .check"}),
            chat({"query": "#setup"}),
            chat({"query": "#setup h2, #setup .intro, #setup li, #setup .detail, #setup button"}),
            chat({"query": "#setup li"}),
            chat({"query": "#setup .intro"}),
            # A message sent anyway says what is missing, in plain words, and nothing answers.
            chat({"click": "#input"}),
            {"typeText": "What does hello.py do?"},
            {"press": "Enter"},
            chat({"waitFor": ".notice.error .headline"}),
            chat({"query": ".notice.error"}),
            {"screenshot": str(card_shot)},
            # Choosing a hosted preset asks for its key; dismissed, the preset is written
            # all the same, and without its key the card stays and says so.
            chat({"click": "#setup button[data-provider='openai']"}),
            {"waitFor": ".quick-input-widget .quick-input-title", "hasText": "openai API key"},
            {"press": "Escape"},
            {"waitFile": str(vscode.settings_file), "contains": '"rhema.provider": "openai"'},
            chat({"waitFor": "#setup h2", "hasText": "The model provider setting does not work"}),
            chat({"query": "#setup .intro"}),
            {"screenshot": str(broken_shot)},
            chat({"query": "#setup li[data-row='demo']"}),
        ],
        timeout_s=120,
    )
    queries = [step["elements"] for step in steps if "query" in step]
    (card,), parts, rows, (intro,), (error,), (broken,), (demo_row,) = queries
    (width,) = [step["width"] for step in steps if "resizeSideBar" in step]
    assert abs(width - 300) <= 4, width
    assert_whole(card, parts)
    titles = [row["text"] for row in rows]
    assert intro["text"].startswith("Rhema needs a model to talk to, and none is set up.")
    assert any(t.startswith("A model server on this machine") for t in titles), titles
    assert any(t.startswith("A hosted provider") and "OpenAI OPENAI_API_KEY" in t for t in titles)
    assert titles[-1].startswith("Try the tiny demo model (SmolLM2-135M-Instruct)")
    assert "no tools, no edits, not for real work" in titles[-1]
    assert error["text"].startswith("No model provider is set up yet.")
    assert broken["text"].startswith("The openai provider needs its API key (OPENAI_API_KEY).")
    assert model.requests == []  # nothing answered: not the demo model, not the fake one
    settings = user_settings(vscode)
    assert settings["rhema.provider"] == "openai"
    assert "rhema.baseUrl" not in settings and "rhema.model" not in settings
    assert card_shot.stat().st_size > 0 and broken_shot.stat().st_size > 0
    if not demo:
        # Without rhema-lsp[local] the demo row says how to install it, and offers no button.
        assert "Not installed: pip install 'rhema-lsp[local]'" in demo_row["text"]
        return
    # The demo model, chosen on purpose: written, and the card goes away.
    chosen_shot = artifacts / "setup-demo-chosen.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"click": "#setup button[data-provider='embedded']"}),
            {"waitFile": str(vscode.settings_file), "contains": '"rhema.provider": "embedded"'},
            chat({"waitFor": "#setup", "state": "hidden"}),
            chat({"waitFor": "#provider", "hasText": "embedded"}),
            chat({"query": "#provider"}),
            {"screenshot": str(chosen_shot)},
        ],
        timeout_s=120,
    )
    ((label,),) = [step["elements"] for step in steps if "query" in step]
    assert label["text"] == "embedded · SmolLM2-135M-Instruct"
    assert user_settings(vscode)["rhema.provider"] == "embedded"


@pytest.mark.parametrize("extra_settings", [{}])  # not the module's server gate below
def test_the_chat_has_its_own_view_a_keybinding_and_the_status_item_and_ask_runs_there(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    model.script(text_reply("Hello **there**.", chunk=3), text_reply("Second.", chunk=3))
    shot = artifacts / "chat-activity-bar.png"
    steps = vscode.drive(
        [
            {"openFile": "hello.py"},
            # The keybinding opens the chat with the caret in its input: typing lands there.
            {"press": OPEN_CHAT_KEY},
            chat({"waitFor": "#input:focus"}),
            {"typeText": "Say hello"},
            chat({"query": "#input"}),
            {"press": "Enter"},
            chat({"waitFor": ".answer strong", "hasText": "there"}),
            {"query": ".activitybar .action-item .action-label[aria-label^='Rhema']"},
            {"screenshot": str(shot)},
            # Another view in the side bar, then the status bar item brings the chat back.
            {"click": ".activitybar .action-item .action-label[aria-label^='Explorer']"},
            {"waitFor": ".part.sidebar .title-label", "hasText": "Explorer"},
            {"click": ".statusbar-item", "hasText": "Rhema"},
            chat({"waitFor": "#input:focus"}),
            # "Rhema: Ask" runs in the chat, not in the output channel.
            {"openFile": "hello.py"},
            {"command": "Rhema: Ask"},
            {"input": "And again", "title": "Rhema: Ask"},
            chat({"waitFor": ".answer", "hasText": "Second."}),
            chat({"query": ".user"}),
            chat({"query": ".user .chip"}),
            {"query": ".part.panel .output-view"},
        ],
        timeout_s=120,
    )
    queries = [step["elements"] for step in steps if "query" in step]
    (typed,), (icon,), prompts, (chip,), output = queries
    assert typed["value"] == "Say hello"
    assert icon["label"].startswith("Rhema")
    # The active editor went along with the chat's prompt: its chip says so.
    assert chip["text"] == "hello.py (active editor)"
    assert [p["text"] for p in prompts] == ["Say hellohello.py (active editor)", "And again"]
    assert output == []  # the Output panel was never brought up
    assert user_texts(model.requests[1])[-1].startswith("And again")
    assert shot.stat().st_size > 0


@pytest.fixture
def installed_flag(tmp_path: Path) -> Path:
    """Until this file exists, the configured server command fails at once, as a missing
    ``rhema-lsp`` would; creating it is "installing" the server."""
    return tmp_path / "rhema-lsp-installed"


@pytest.fixture
def extra_settings(
    request: pytest.FixtureRequest, installed_flag: Path, server_command: list[str]
) -> dict[str, Any]:
    gate = f'test -e "{installed_flag}" || {{ echo "rhema-lsp: not installed" >&2; exit 127; }}'
    command = ["sh", "-c", f'{gate}; exec "$@"', "sh", *server_command]
    return {"rhema.server.command": command, **getattr(request, "param", {})}


def test_a_prompt_sent_while_the_server_cannot_start_stays_with_the_error_and_a_retry(
    vscode: VSCode,
    model: FakeModelServer,
    artifacts: Path,
    extra_settings: dict[str, Any],
    installed_flag: Path,
) -> None:
    model.script(text_reply("Now I am here.", chunk=4))
    shot = artifacts / "chat-not-sent.png"
    install = [sys.executable, "-c", "import sys, pathlib; pathlib.Path(sys.argv[1]).touch()"]
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"click": "#input"}),
            {"typeText": "Are you there?"},
            {"press": "Enter"},
            chat({"waitFor": "#send-error .retry"}),
            chat({"query": "#input"}),
            chat({"query": "#send-error"}),
            chat({"query": ".user"}),
            {"screenshot": str(shot)},
            # The user installs the server; Retry starts it and sends the prompt.
            {"exec": [*install, str(installed_flag)]},
            chat({"click": "#send-error .retry"}),
            chat({"waitFor": ".answer", "hasText": "Now I am here."}),
            chat({"query": "#input"}),
            chat({"query": ".user"}),
            chat({"waitFor": "#send-error", "state": "hidden"}),
        ],
        timeout_s=120,
    )
    queries = [step["elements"] for step in steps if "query" in step]
    (kept,), (error,), before, (emptied,), (sent,) = queries
    assert kept["value"] == "Are you there?"
    assert error["text"].startswith("Not sent: the Rhema server did not start"), error
    assert "Retry" in error["text"]
    assert before == []  # nothing went into the transcript
    assert emptied["value"] == ""
    assert sent["text"] == "Are you there?"
    assert user_texts(model.requests[0])[0].startswith("Are you there?")
    assert shot.stat().st_size > 0


KEY = "sk-rhema-test-0123456789abcdef"


@pytest.mark.parametrize("extra_settings", [NOTHING_SET_UP], ids=["nothing-set-up"])
def test_a_hosted_provider_s_key_typed_in_the_setup_card_is_kept_secret_and_used(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    """The key goes into VS Code's secret storage, the server restarts with it in its
    environment and resolves the provider: the card goes; the key is in no setting, no
    workspace file and no output channel."""
    shot = artifacts / "setup-key-asked.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            chat({"waitFor": "#setup h2", "hasText": "Choose a model provider"}),
            chat({"click": "#setup button[data-provider='openai']"}),
            {"waitFor": ".quick-input-widget .quick-input-title", "hasText": "openai API key"},
            {"query": ".quick-input-widget input[type='password']"},
            {"screenshot": str(shot)},
            {"input": KEY, "title": "openai API key"},
            {"waitFile": str(vscode.settings_file), "contains": '"rhema.provider": "openai"'},
            chat({"waitFor": "#setup", "state": "hidden"}),
            chat({"waitFor": "#provider", "hasText": "openai"}),
            chat({"query": "#provider"}),
        ],
        timeout_s=120,
    )
    (field,), (label,) = [step["elements"] for step in steps if "query" in step]
    assert field["value"] == ""  # a password field, empty until typed
    assert label["text"].startswith("openai")
    assert KEY not in vscode.settings_file.read_text()
    for path in vscode.workspace.rglob("*"):
        if path.is_file() and path.stat().st_size < 1 << 20:
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in vscode.channel("Rhema") and KEY not in vscode.channel("Rhema Server")
    assert model.requests == []
    assert shot.stat().st_size > 0
