"""The command line's flag for each setting: one table, defaults derived from
the server's :class:`~rhema_lsp.runs.settings.Settings`.

Every setting of the contract is here, with its flag and the commands that
take it, or no flag with the reason (editor-only, or set elsewhere). A flag left out sends
nothing, so the server's default applies, and ``--help`` says which default
that is. The values given are validated by the server's own settings model,
and a value it refuses is a usage error that names the flag.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rhema_lsp.headless.errors import UsageError
from rhema_lsp.providers.names import SettingNames
from rhema_lsp.providers.presets import PRESETS, PROTOCOLS
from rhema_lsp.vocabulary import MODES

__all__ = [
    "ASK_MODE",
    "CLI_NAMES",
    "SETTING_FLAGS",
    "SettingFlag",
    "add_setting_flags",
    "server_default",
    "settings_from",
    "stated_help",
]

ALL = ("ask", "sessions", "status", "rewind", "acp")
RUN = ("ask", "acp")
"""The commands that run turns, so take the settings of a turn."""

ASK_MODE = "ask"
"""``rhema-lsp ask``'s mode: read-only, because it writes to disk with no editor
to undo in (editors default to the server's ``edit``)."""

CLI_NAMES = SettingNames(
    provider="--provider",
    model="--model",
    base_url="--base-url",
    protocol="--protocol",
    set_key="export {var}=... in this shell, then run the command again",
)
"""How provider errors name things on the command line."""


@dataclass(frozen=True, slots=True)
class SettingFlag:
    """One setting and its flag.

    Parameters
    ----------
    setting
        The setting's name in the contract (camelCase).
    flag
        Its flag, or ``None`` when it has none (``why`` says why).
    help
        What it does; the default is appended.
    commands
        The subcommands that take the flag.
    options
        The rest of ``argparse.add_argument``'s arguments.
    why
        Why the setting has no flag.
    command_defaults
        A command whose default differs from the server's, and that default.
    """

    setting: str
    flag: str | None
    help: str
    commands: tuple[str, ...] = ALL
    options: Mapping[str, Any] = field(default_factory=dict)
    why: str = ""
    command_defaults: Mapping[str, Any] = field(default_factory=dict)

    @property
    def dest(self) -> str:
        assert self.flag is not None
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def refusable(self) -> bool:
        """Whether the settings model may refuse a value argparse took: a
        number (the model bounds it); choices and strings always pass."""
        return "type" in self.options


def server_default(setting: str) -> Any:
    """The server's default for ``setting`` (camelCase)."""
    from rhema_lsp.runs.settings import Settings

    for name, info in Settings.model_fields.items():
        if setting in (name, info.alias):
            return info.get_default(call_default_factory=True)
    raise KeyError(setting)


SETTING_FLAGS: tuple[SettingFlag, ...] = (
    SettingFlag(
        "provider",
        "--provider",
        f"a preset: {', '.join(PRESETS)}, or custom with --base-url and --protocol",
    ),
    SettingFlag("model", "--model", "the model id (default: the preset's, or the first listed)"),
    SettingFlag("baseUrl", "--base-url", "the endpoint (default: the preset's); custom needs it"),
    SettingFlag(
        "protocol",
        "--protocol",
        "the wire of a custom endpoint (default: none; custom needs it)",
        options={"choices": PROTOCOLS},
    ),
    SettingFlag(
        "thinking",
        "--thinking",
        "reasoning effort",
        RUN,
        {"choices": ("default", "low", "medium", "high")},
    ),
    SettingFlag(
        "vision",
        "--vision",
        "whether the model reads images (--no-vision: never send any)",
        RUN,
        {"action": argparse.BooleanOptionalAction},
    ),
    SettingFlag("maxTokens", "--max-tokens", "output tokens per model call", RUN, {"type": int}),
    SettingFlag("maxSteps", "--max-steps", "steps per turn", RUN, {"type": int}),
    SettingFlag(
        "mode",
        "--mode",
        "ask: read only; plan: read, then propose a plan; edit: change files; "
        "agent: also run commands",
        RUN,
        {"choices": MODES},
        command_defaults={"ask": ASK_MODE},
    ),
    SettingFlag(
        "review",
        None,
        "",
        why="it needs the editor's refactor preview; headless, try --mode ask first",
    ),
    SettingFlag(
        "sessionStore",
        "--session-store",
        "where sessions are kept: workspace (<folder>/.rhema/) or user",
        options={"choices": ("workspace", "user")},
    ),
    SettingFlag(
        "commandAllowlist",
        "--allow",
        "a command run_command may run without asking (repeatable)",
        RUN,
        {"action": "append", "metavar": "COMMAND"},
    ),
    SettingFlag(
        "sandbox",
        "--sandbox",
        "run_command in an OS sandbox: auto (when available), require (refuse commands "
        "without one) or off (ask about each command)",
        ("ask", "status", "acp"),
        {"choices": ("auto", "require", "off")},
    ),
    SettingFlag(
        "sandboxNetwork",
        "--sandbox-network",
        "let sandboxed commands use the network",
        RUN,
        {"action": argparse.BooleanOptionalAction},
    ),
    SettingFlag(
        "sandboxWritable",
        "--sandbox-writable",
        "a folder sandboxed commands may also write (repeatable)",
        RUN,
        {"action": "append", "metavar": "FOLDER"},
    ),
    SettingFlag(
        "approvalTimeout",
        "--approval-timeout",
        "seconds a confirmation question waits for an answer before it counts as Deny",
        ("ask",),
        {"type": float, "metavar": "SECONDS"},
    ),
    SettingFlag(
        "responseTimeout",
        "--response-timeout",
        "seconds one model response may take, from the request to its end",
        RUN,
        {"type": float, "metavar": "SECONDS"},
    ),
    SettingFlag(
        "minStreamRate",
        "--min-stream-rate",
        "bytes a minute a response must average after its first two minutes; 0: no minimum",
        RUN,
        {"type": float, "metavar": "BYTES"},
    ),
    SettingFlag(
        "logLevel",
        "--log-level",
        "the server's own log, to stderr",
        options={"choices": ("error", "warning", "info", "debug")},
    ),
    SettingFlag(
        "contextWindow",
        "--context-window",
        "the model's context window in tokens (default: what the provider reports)",
        RUN,
        {"type": int, "metavar": "TOKENS"},
    ),
    SettingFlag(
        "compactThreshold",
        "--compact-threshold",
        "the share of the window past which older rounds are summarised first",
        RUN,
        {"type": float, "metavar": "SHARE"},
    ),
    SettingFlag(
        "diagnosticsWait",
        "--diagnostics-wait",
        "seconds an edit waits for the language server's problems of the edited version",
        RUN,
        {"type": float, "metavar": "SECONDS"},
    ),
    SettingFlag(
        "toolOutputCap",
        "--tool-output-cap",
        "bytes of a tool's result the model sees (its start and end kept)",
        RUN,
        {"type": int, "metavar": "BYTES"},
    ),
    SettingFlag(
        "languageServers",
        None,
        "",
        why="it goes in user settings or the user config file, which headless reads",
    ),
    SettingFlag(
        "inlineCompletion",
        None,
        "",
        why="completion is an editor feature: a terminal has no cursor to complete at",
    ),
    SettingFlag(
        "completionProvider",
        None,
        "",
        why="completion is an editor feature: a terminal has no cursor to complete at",
    ),
    SettingFlag(
        "completionModel",
        None,
        "",
        why="completion is an editor feature: a terminal has no cursor to complete at",
    ),
    SettingFlag(
        "completionBaseUrl",
        None,
        "",
        why="completion is an editor feature: a terminal has no cursor to complete at",
    ),
    SettingFlag(
        "completionDebounce",
        None,
        "",
        why="completion is an editor feature: a terminal has no cursor to complete at",
    ),
    SettingFlag(
        "mcpServers",
        None,
        "",
        why="MCP servers come from user settings or the user config file, which headless reads",
    ),
    SettingFlag(
        "mcpModes",
        None,
        "",
        why="it goes with mcpServers, in user settings or the user config file",
    ),
    SettingFlag(
        "mcpStartTimeout",
        None,
        "",
        why="it goes with mcpServers, in user settings or the user config file",
    ),
)
"""Every setting of the contract, in the README's order."""


def _shown(value: Any) -> str:
    if value is None:
        return "autodetect"
    if isinstance(value, tuple):
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def stated_help(action: argparse.Action) -> str | None:
    """The help ``--help`` shows for ``action``: a setting flag's ends with
    its default (the command's, else the server's, looked up only now)."""
    text = action.help
    setting: str | None = getattr(action, "rhema_setting", None)
    if text is None or setting is None or "(default:" in text:
        return text
    default = action.default if action.default is not None else server_default(setting)
    return f"{text} (default: {_shown(default)})"


class _DefaultsHelp(argparse.HelpFormatter):
    """Shows each flag's :func:`stated_help`."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return stated_help(action)


def add_setting_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """Add the flags ``command`` takes, each help ending with its default."""
    parser.formatter_class = _DefaultsHelp
    for item in SETTING_FLAGS:
        if item.flag is None or command not in item.commands:
            continue
        options = dict(item.options)
        if command in item.command_defaults:
            options["default"] = item.command_defaults[command]
        action = parser.add_argument(item.flag, help=item.help, **options)
        action.rhema_setting = item.setting  # type: ignore[attr-defined]


def settings_from(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the flags given name (camelCase keys), validated.

    Raises
    ------
    UsageError
        A value the server's settings model refuses; the message names the flag.
    """
    settings: dict[str, Any] = {}
    flags: dict[str, str] = {}
    refusable = False
    for item in SETTING_FLAGS:
        if item.flag is None or not hasattr(args, item.dest):
            continue
        value = getattr(args, item.dest)
        if value is not None:
            settings[item.setting] = value
            flags[item.setting] = item.flag
            refusable = refusable or item.refusable
    if not refusable:
        return settings
    from rhema_lsp.runs.settings import parse_settings

    _, problems = parse_settings(settings)
    if problems:
        problem = problems[0]
        flag = flags.get(problem.field, problem.field)
        raise UsageError(
            f"{flag} {settings.get(problem.field)!r}: {problem.message[:1].lower()}"
            f"{problem.message[1:]}"
        )
    return settings
