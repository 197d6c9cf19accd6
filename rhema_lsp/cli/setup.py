"""``rhema-lsp acp --setup``: choose the model provider in a terminal.

This is what an ACP client runs for the agent's Terminal Auth (the
``initialize`` answer's ``authMethods`` entry of type ``terminal``, whose
``args`` this command's flag is): the user picks from the same choices as
the editors' setup card (:func:`~rhema_lsp.providers.setup.survey_setup`:
the local model servers answering on their default ports, the hosted
presets with the variable each needs, an endpoint of the user's own, the
demo model), types a key or leaves it to the environment, and the choice is
stored in the user's config directory, only the user able to read it
(:mod:`~rhema_lsp.providers.stored`), never in a workspace. The agent's
next session uses it.

Rules: the questions go to stdout and the answers come from stdin, one
line each (a key is read without echo when stdin is a terminal); a choice
is typed by its number or its name; an answer that names nothing, or the
end of input, stores nothing and exits 1, as the protocol asks of a failed
authentication (0: stored). A key is never printed back.
"""

from __future__ import annotations

import asyncio
import getpass
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from rhema_lsp.providers.errors import ProviderConfigError
from rhema_lsp.providers.presets import PROTOCOLS
from rhema_lsp.providers.secrets import check_base_url
from rhema_lsp.providers.setup import SetupSurvey, survey_setup
from rhema_lsp.providers.stored import StoredChoice, choice_path, write_choice

__all__ = ["SetupCancelled", "run_setup", "setup_choices"]

CUSTOM = "custom"


class SetupCancelled(Exception):
    """The user named nothing, or the input ended: nothing is stored."""


@dataclass(frozen=True, slots=True)
class Option:
    """One line of the menu: what it is called, what it says, and its
    preset (a local server's ``base_url`` and ``models`` with it)."""

    name: str
    label: str
    provider: str
    base_url: str | None = None
    models: tuple[str, ...] = ()
    key_var: str | None = None
    default_model: str | None = None


def setup_choices(survey: SetupSurvey) -> list[Option]:
    """The menu, the most ready first (the order of the editors' card)."""
    options: list[Option] = []
    for server in survey.servers:
        shown = ", ".join(server.models[:3]) or "no model loaded"
        options.append(
            Option(
                server.preset,
                f"{server.label or server.preset} at {server.base_url} (lists {shown})",
                server.preset,
                server.base_url,
                server.models,
            )
        )
    hosted = sorted(
        (p for p in survey.presets if p.kind == "hosted"), key=lambda p: not p.key_present
    )
    for preset in hosted:
        how = f"{preset.key_var} is set" if preset.key_present else "type its key"
        options.append(
            Option(
                preset.name,
                f"{preset.name}, {preset.model} ({how})",
                preset.name,
                key_var=preset.key_var,
                default_model=preset.model,
            )
        )
    options.append(
        Option(CUSTOM, f"another endpoint: its URL and protocol ({', '.join(PROTOCOLS)})", CUSTOM)
    )
    demo = survey.demo
    if demo.available:
        options.append(Option(demo.name, f"{demo.name}: {demo.model}, {demo.note}", demo.name))
    return options


class _Asker:
    def __init__(self, stdin: TextIO, stdout: TextIO, secret: Callable[[str], str]) -> None:
        self.stdin, self.stdout, self.secret = stdin, stdout, secret

    def line(self, question: str, default: str | None = None) -> str:
        shown = f" [{default}]" if default else ""
        self.stdout.write(f"{question}{shown}: ")
        self.stdout.flush()
        answer = self.stdin.readline()
        if not answer:
            raise SetupCancelled("the input ended")
        return answer.strip() or (default or "")

    def key(self, question: str) -> str:
        if self.stdin.isatty():
            return self.secret(f"{question}: ").strip()
        return self.line(question)


def _pick(options: list[Option], answer: str) -> Option:
    if answer.isdigit() and 1 <= int(answer) <= len(options):
        return options[int(answer) - 1]
    for option in options:
        if option.name == answer.lower():
            return option
    raise SetupCancelled(f"{answer!r} is none of the choices")


def _ask(ask: _Asker, option: Option) -> StoredChoice:
    if option.provider == CUSTOM:
        url = check_base_url(ask.line("Endpoint URL (e.g. http://127.0.0.1:8080/v1)"))
        protocol = ask.line(f"Protocol ({', '.join(PROTOCOLS)})", "openai").lower()
        if protocol not in PROTOCOLS:
            raise SetupCancelled(f"{protocol!r} is not one of {', '.join(PROTOCOLS)}")
        model = ask.line("Model (empty: the server's)") or None
        key = ask.key("Key (empty: none)") or None
        return StoredChoice(CUSTOM, model, url, protocol, key)
    if option.base_url is not None:  # a local server found on its port
        listed = ", ".join(option.models[:10])
        first = option.models[0] if option.models else None
        model = ask.line(f"Model ({listed})" if listed else "Model", first)
        return StoredChoice(option.provider, model or None, option.base_url)
    if option.key_var is not None:  # a hosted preset
        model = ask.line("Model", option.default_model)
        key = ask.key(f"Key (empty: {option.key_var} from the editor's environment)") or None
        return StoredChoice(option.provider, model or None, key=key)
    return StoredChoice(option.provider)  # the demo model


def run_setup(
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    *,
    survey: SetupSurvey | None = None,
    secret: Callable[[str], str] = getpass.getpass,
) -> int:
    """Ask, store, and say where (see the module docstring); the exit code."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    survey = survey or asyncio.run(survey_setup())
    options = setup_choices(survey)
    stdout.write("Choose the model provider rhema-lsp uses in ACP editors:\n")
    for number, option in enumerate(options, 1):
        stdout.write(f"  {number}. {option.label}\n")
    ask = _Asker(stdin, stdout, secret)
    try:
        choice = _ask(ask, _pick(options, ask.line("Your choice (number or name)", "1")))
        path = write_choice(choice, choice_path())
    except (SetupCancelled, ProviderConfigError, OSError) as exc:
        stdout.write(f"\nNothing stored: {exc}\n")
        return 1
    what = f"{choice.provider}" + (f", model {choice.model}" if choice.model else "")
    kept = " and its key" if choice.key else ""
    stdout.write(f"\nStored {what}{kept} in {path} (only you can read it).\n")
    stdout.write("The agent's next session uses it.\n")
    return 0
