"""What a user can choose from when no provider is set up: the first run.

The embedded model is tiny (SmolLM2-135M: no tools, no edits) and is never
chosen by itself, only when the ``provider`` setting names it. With nothing
set up, the choices are surveyed instead and shown to the user:

- the local model servers answering on their default loopback ports, and the
  models each lists (one that lists none is shown too: it needs a model);
- the provider key variables present in the environment, by **name** only
  (a value is never read beyond its presence, never copied);
- every preset with the variable its key comes from, or none for a local one;
- the demo model, whether it is installed, labelled for what it is.

:func:`survey_setup` probes and returns a :class:`SetupSurvey` (the server's
``rhema.status`` sends it as ``setup``); :func:`build_survey` makes one from
probes already done (the resolver's own, so a failed resolution does not
probe twice). :func:`setup_lines` says the same in words, naming settings the
caller's way (:class:`~.names.SettingNames`): it is both the text of the
"nothing set up" error and the terminal's listing, so they never disagree.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rhema_lsp.providers.embedded import locate_embedded_model
from rhema_lsp.providers.errors import ProviderConfigError
from rhema_lsp.providers.local import DETECT_TIMEOUT, ModelListing, find_local_servers, port_list
from rhema_lsp.providers.names import EDITOR_NAMES, SettingNames
from rhema_lsp.providers.presets import (
    CUSTOM_KEY_VAR,
    ENV_KEY_ORDER,
    LOCAL_AUTODETECT,
    PRESETS,
    PROTOCOLS,
    LocalServer,
)

__all__ = [
    "DEMO_INSTALL",
    "DEMO_NOTE",
    "NOT_SET_UP",
    "DemoModel",
    "FoundServer",
    "PresetNeed",
    "ProviderNotSetUp",
    "SetupSurvey",
    "build_survey",
    "not_set_up_message",
    "setup_lines",
    "survey_setup",
]

DEMO_NOTE = "a tiny demo model: no tools, no edits, not for real work"
"""How the embedded model is labelled wherever it is offered."""

DEMO_INSTALL = "pip install 'rhema-lsp[local]'"
"""What installs the embedded model, in rhema-lsp's own environment."""

_SHOWN_MODELS = 20
"""At most this many of a server's models are listed."""


@dataclass(frozen=True, slots=True)
class FoundServer:
    """A local server that answered on its default port, and what it lists."""

    preset: str
    label: str
    base_url: str
    models: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PresetNeed:
    """A preset the ``provider`` setting can name, and what it needs:
    ``key_var`` in the environment for a hosted one, nothing for a local one."""

    name: str
    kind: Literal["hosted", "local"]
    key_var: str | None
    key_present: bool
    base_url: str
    model: str


@dataclass(frozen=True, slots=True)
class DemoModel:
    """The embedded demo model: whether it is installed, and what it is."""

    name: str
    model: str
    available: bool
    install: str
    note: str


@dataclass(frozen=True, slots=True)
class SetupSurvey:
    """Everything a user can choose a provider from (see the module docstring).

    ``configured`` says whether a ``provider`` or ``baseUrl`` setting is set;
    ``keys`` are the names of the key variables present, never their values.
    """

    configured: bool
    servers: tuple[FoundServer, ...]
    keys: tuple[str, ...]
    presets: tuple[PresetNeed, ...]
    demo: DemoModel


def _present(env: Mapping[str, str], name: str) -> bool:
    return bool(env.get(name, "").strip())


def build_survey(
    answered: Sequence[tuple[LocalServer, ModelListing]],
    env: Mapping[str, str],
    *,
    configured: bool,
    demo_path: Path | None,
) -> SetupSurvey:
    """The survey from probes already made: the servers that ``answered``,
    the key names present in ``env``, and where the demo model is (if any)."""
    servers = tuple(
        FoundServer(
            next((p for owner, p in server.owners if owner in listing.owners), server.preset),
            server.label,
            server.base_url,
            tuple(listing.models[:_SHOWN_MODELS]),
        )
        for server, listing in answered
    )
    presets = tuple(
        PresetNeed(
            preset.name,
            "local" if preset.local else "hosted",
            preset.key_var,
            preset.key_var is not None and _present(env, preset.key_var),
            preset.base_url,
            preset.model,
        )
        for preset in PRESETS.values()
        if preset.protocol != "embedded"
    )
    variables = [str(PRESETS[name].key_var) for name in ENV_KEY_ORDER] + [CUSTOM_KEY_VAR]
    demo = PRESETS["embedded"]
    return SetupSurvey(
        configured=configured,
        servers=servers,
        keys=tuple(name for name in variables if _present(env, name)),
        presets=presets,
        demo=DemoModel(demo.name, demo.model, demo_path is not None, DEMO_INSTALL, DEMO_NOTE),
    )


async def survey_setup(
    env: Mapping[str, str] | None = None,
    *,
    configured: bool = False,
    local_servers: Sequence[LocalServer] | None = None,
    detect_timeout: float = DETECT_TIMEOUT,
    locate_embedded: Callable[[], Path | None] = locate_embedded_model,
) -> SetupSurvey:
    """Probe the default local ports (all at once, ``detect_timeout`` each) and
    survey the choices; ``env`` is ``os.environ`` by default."""
    servers = LOCAL_AUTODETECT if local_servers is None else tuple(local_servers)
    answered = await find_local_servers(servers, detect_timeout) if servers else []
    return build_survey(
        answered,
        os.environ if env is None else env,
        configured=configured,
        demo_path=locate_embedded(),
    )


def setup_lines(survey: SetupSurvey, names: SettingNames = EDITOR_NAMES) -> list[str]:
    """The choices in words, one per line, the most ready first."""
    lines: list[str] = []
    for server in survey.servers:
        what = server.label or server.preset
        if server.models:
            shown = ", ".join(server.models[:3]) + (", ..." if len(server.models) > 3 else "")
            lines.append(
                f"{what} answers at {server.base_url}: use {names.provider} {server.preset} "
                f"(it lists {shown})"
            )
        else:
            lines.append(
                f"{what} answers at {server.base_url} but lists no model: load one into it, "
                f"or name it with {names.model}"
            )
    hosted = [p for p in survey.presets if p.kind == "hosted"]
    for preset in hosted:
        if preset.key_present:
            lines.append(f"use {names.provider} {preset.name} ({preset.key_var} is set)")
    if not survey.servers:
        labels = ", ".join(server.label for server in LOCAL_AUTODETECT[:-1])
        lines.append(
            f"start a local server ({labels}, vLLM) on its default port "
            f"({port_list(LOCAL_AUTODETECT)}): it is found by itself"
        )
    waiting = [p for p in hosted if not p.key_present]
    if waiting:
        first, *others = waiting
        also = ", ".join(f"{p.name}: {p.key_var}" for p in others)
        lines.append(
            f"a hosted provider: {names.provider} {first.name} with {first.key_var} in the "
            f"environment" + (f" (or {also})" if also else "")
        )
    lines.append(
        f"any other endpoint: {names.base_url} with {names.protocol} "
        f"({', '.join(PROTOCOLS[:-1])} or {PROTOCOLS[-1]})"
    )
    demo = survey.demo
    where = "installed" if demo.available else f"not installed: {demo.install}"
    lines.append(
        f"the demo model: {names.provider} {demo.name} ({demo.model}, {demo.note}; {where})"
    )
    return lines


NOT_SET_UP = "no model provider is set up (the demo model is used only when {provider} names it)"
"""The head of the "nothing set up" error; ``{provider}`` is the setting's name."""


def not_set_up_message(survey: SetupSurvey, names: SettingNames = EDITOR_NAMES) -> str:
    """The "nothing set up" error: what is missing, then every choice."""
    head = NOT_SET_UP.format(provider=names.provider)
    return f"{head}; choose one: {'; '.join(setup_lines(survey, names))}"


class ProviderNotSetUp(ProviderConfigError):
    """Nothing is set up: no setting, no local server with a model, no key.

    The message lists every choice; ``survey`` holds them for a client that
    shows them its own way (the terminal, one per line).
    """

    def __init__(self, survey: SetupSurvey, names: SettingNames = EDITOR_NAMES) -> None:
        super().__init__(not_set_up_message(survey, names))
        self.survey = survey
