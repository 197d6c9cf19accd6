"""The ``rhema-lsp`` command.

``serve`` (the default with no subcommand, for editors) runs the language
server on stdio, or on TCP for debugging; ``acp`` runs the Agent Client
Protocol agent on stdio, for ACP editors (Zed, JetBrains, ...). ``ask``,
``sessions``, ``status`` and ``rewind`` are the headless client: they start
the server as a child process and drive it as an editor would.

Everything that can be checked before the server starts is checked here, so
a turn that cannot run fails before a session exists: the flags (against the
server's own settings model, :mod:`.flags`), the prompt and the files
(:mod:`.inputs`), and the provider, chosen here with the flags' names in its
messages and handed to the server pinned. Exit codes are
:class:`~rhema_lsp.headless.errors.Exit`; errors are one or two plain
sentences, ``--debug`` adds the traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import traceback
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from rhema_lsp import __version__
from rhema_lsp.cli.embedded import folder_context
from rhema_lsp.cli.flags import ASK_MODE, CLI_NAMES, add_setting_flags, server_default
from rhema_lsp.cli.flags import settings_from as _settings_from
from rhema_lsp.cli.inputs import attached_files, attached_images, read_prompt
from rhema_lsp.headless.errors import Exit, HeadlessError, UsageError
from rhema_lsp.tools.roots import unsafe_root_reason

if TYPE_CHECKING:
    from rhema_lsp.providers import ProviderChoice, ProviderNotSetUp

__all__ = ["build_parser", "main"]

EXIT_CODES = """exit codes: 0 answered, 1 provider or tool failure, 2 usage error,
3 stopped before an answer (token or step limit), 130 cancelled (Ctrl-C)"""


def _serve(args: argparse.Namespace) -> int:
    from rhema_lsp.server import create_server

    server = create_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            raise UsageError(f"--tcp takes HOST:PORT, not {args.tcp!r}")
        return server.start_tcp(host or "127.0.0.1", int(port))
    return server.start_io()


def _acp(args: argparse.Namespace) -> int:
    if args.setup:  # ACP's Terminal Auth: the client runs this in a terminal
        from rhema_lsp.cli.setup import run_setup

        return run_setup()
    from rhema_lsp.acp import serve

    asyncio.run(serve(_settings_from(args)))
    return 0


def _folder(args: argparse.Namespace) -> Path:
    folder = Path(args.folder).expanduser().resolve()
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder: pass an existing folder with --folder")
    unsafe = unsafe_root_reason(folder)
    if unsafe is not None:
        raise UsageError(f"--folder refused: {unsafe}")
    return folder


async def _choose(args: argparse.Namespace) -> ProviderChoice:
    """The provider the flags and the environment name, as the server would
    choose it, in the command line's words.

    Raises
    ------
    NotSetUp
        Nothing set up, nothing found: the choices, one per line.
    UsageError
        Unknown preset, refused URL, missing key, ...
    """
    from rhema_lsp.providers import (
        ProviderConfigError,
        ProviderNotSetUp,
        ProviderSettings,
        choose_provider,
    )

    settings = ProviderSettings(
        provider=args.provider, model=args.model, base_url=args.base_url, protocol=args.protocol
    )
    try:
        return await choose_provider(settings, names=CLI_NAMES)
    except ProviderNotSetUp as exc:
        raise NotSetUp(exc) from exc
    except ProviderConfigError as exc:
        raise UsageError(str(exc)) from exc


class NotSetUp(UsageError):
    """No provider is set up: the choices, one per line (exit 2); ``setup``
    is the same as ``rhema.status`` sends it, for ``--json``."""

    def __init__(self, cause: ProviderNotSetUp) -> None:
        from rhema_lsp.contract import ProviderSetup
        from rhema_lsp.providers import setup_lines
        from rhema_lsp.providers.setup import NOT_SET_UP

        lines = "".join(f"\n  - {line}" for line in setup_lines(cause.survey, CLI_NAMES))
        super().__init__(f"{NOT_SET_UP.format(provider=CLI_NAMES.provider)}. Choose one:{lines}")
        self.setup = ProviderSetup.model_validate(asdict(cause.survey))
        self.error = str(cause)


def _describe(choice: ProviderChoice) -> str:
    where = choice.base_url or "in process"
    return f"provider: {choice.name} · model {choice.model} · {where} — {choice.source}"


def _ask(args: argparse.Namespace) -> int:
    from rhema_lsp.headless.run import AskOptions, ask

    if args.session and args.resume_last:
        raise UsageError("--session and --continue exclude each other: pick one")
    prompt = read_prompt(args.prompt, args.prompt_file, sys.stdin.buffer, sys.stdin.isatty())
    settings = _settings_from(args)
    folder = _folder(args)
    if args.worktree:  # the checkout stays as it is: no store in it either
        settings["sessionStore"] = "user"
    files = attached_files(folder, args.file)
    images = attached_images(args.image)

    async def run() -> int:
        choice = await _choose(args)
        note = _describe(choice)
        text, attached = prompt, files
        continuing = args.session is not None or args.resume_last
        if choice.protocol == "embedded" and args.mode != ASK_MODE:
            raise UsageError(
                f"--mode {args.mode} needs tools and the embedded model has none, so it "
                "would never change a file: use --mode ask, or pick another --provider"
            )
        if choice.protocol == "embedded" and not files and not continuing:
            context = folder_context(folder)
            text = f"{prompt}\n\n{context.listing}" if context.listing else prompt
            attached = context.files
            names = ", ".join(str(path.relative_to(folder)) for path in attached) or "nothing"
            note += f"; attached: {names} (name files with --file)"
        options = AskOptions(
            folder=folder,
            settings={**settings, **choice.as_settings()},
            provider_note=note,
            debug=args.debug,
            prompt=text,
            files=attached,
            images=images,
            session=args.session,
            resume_last=args.resume_last,
            json=args.json,
            yes=args.yes,
            trust_project=args.trust_project,
            show_thinking=not args.no_thinking,
            worktree=args.worktree,
        )
        return await ask(options)

    return asyncio.run(run())


def _sessions(args: argparse.Namespace) -> int:
    from rhema_lsp.headless.commands import sessions
    from rhema_lsp.headless.connection import ClientOptions

    options = ClientOptions(_folder(args), _settings_from(args), debug=args.debug)
    return asyncio.run(sessions(options, args.json))


def _rewind(args: argparse.Namespace) -> int:
    from rhema_lsp.headless.commands import RewindRequest, rewind
    from rhema_lsp.headless.connection import ClientOptions
    from rhema_lsp.vocabulary import RewindWhat

    options = ClientOptions(_folder(args), _settings_from(args), debug=args.debug)
    paths = tuple(Path(path) for path in args.path)
    what: RewindWhat = args.what or ("code" if paths else "both")
    request = RewindRequest(args.session, args.turn, what, args.force, paths)
    return asyncio.run(rewind(options, request, args.json))


def _status(args: argparse.Namespace) -> int:
    from rhema_lsp.headless.commands import NoProvider, status
    from rhema_lsp.headless.connection import ClientOptions

    settings = _settings_from(args)
    folder = _folder(args)
    mode = f"{ASK_MODE} for rhema-lsp ask (--mode); {server_default('mode')} in an editor"

    async def run() -> int:
        try:
            choice = await _choose(args)
        except NotSetUp as exc:
            # Everything else is shown all the same: the moment it helps most.
            advice = NoProvider(exc.error, str(exc))
            return await status(
                ClientOptions(folder, settings, debug=args.debug), args.json, mode, advice
            )
        options = ClientOptions(
            folder, {**settings, **choice.as_settings()}, choice.source, debug=args.debug
        )
        return await status(options, args.json, mode)

    return asyncio.run(run())


def _add_client_flags(parser: argparse.ArgumentParser, command: str) -> None:
    parser.add_argument("--folder", default=".", help="the workspace folder (default: here)")
    add_setting_flags(parser, command)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks and the server's stderr"
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line, with its subcommands."""
    parser = argparse.ArgumentParser(
        prog="rhema-lsp",
        description="An AI coding agent inside the editor, as a language server.",
        epilog=EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"rhema-lsp {__version__}")
    commands = parser.add_subparsers(dest="command")

    serve = commands.add_parser("serve", help="run the language server (the default)")
    serve.add_argument("--stdio", action="store_true", help="LSP on stdin/stdout (the default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead, for debugging")
    serve.add_argument("--debug", action="store_true", help="show tracebacks")
    serve.set_defaults(run=_serve)

    acp = commands.add_parser(
        "acp", help="run the Agent Client Protocol agent on stdio (Zed, JetBrains, ...)"
    )
    add_setting_flags(acp, "acp")
    acp.add_argument("--debug", action="store_true", help="show tracebacks")
    acp.add_argument(
        "--setup",
        action="store_true",
        help="choose the model provider in this terminal (stored in your user config)",
    )
    acp.set_defaults(run=_acp)

    ask = commands.add_parser(
        "ask",
        help="ask the agent once, headless",
        description="Run one turn: the answer to stdout, everything else to stderr.",
        epilog=EXIT_CODES,
    )
    ask.add_argument(
        "prompt",
        nargs="?",
        help="what to ask or do; `-` (or no argument with a pipe) reads stdin",
    )
    ask.add_argument("--prompt-file", metavar="PATH", help="read the prompt from a file")
    _add_client_flags(ask, "ask")
    ask.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="attach a file of the folder to the prompt (repeatable)",
    )
    ask.add_argument(
        "--image",
        action="append",
        default=[],
        metavar="PATH",
        help="attach an image (PNG, JPEG, GIF, WebP; any path) to the prompt (repeatable)",
    )
    ask.add_argument("--session", help="continue this session")
    ask.add_argument(
        "--continue",
        dest="resume_last",
        action="store_true",
        help="continue the most recent session of the folder",
    )
    ask.add_argument(
        "--yes",
        action="store_true",
        help="approve every question about an action (commands, protected files); "
        "never trust in the project's own programs",
    )
    ask.add_argument(
        "--trust-project",
        action="store_true",
        help="use the project's own programs (its .mcp.json servers) this run: "
        "only for a repository you trust, never for an untrusted pull request in CI",
    )
    ask.add_argument("--no-thinking", action="store_true", help="hide the model's reasoning")
    ask.add_argument(
        "--worktree",
        action="store_true",
        help="run in a new git worktree on branch rhema/NAME (HEAD plus your uncommitted "
        "changes), leaving this checkout untouched",
    )
    ask.set_defaults(run=_ask)

    from rhema_lsp.cli.worktrees import add_worktree_commands

    add_worktree_commands(commands)

    listing = commands.add_parser("sessions", help="list the folder's sessions")
    _add_client_flags(listing, "sessions")
    listing.set_defaults(run=_sessions)

    rewinding = commands.add_parser(
        "rewind",
        help="restore a session's files and/or conversation to before a turn",
        description=(
            "Restore the files a session's turns changed, from the turn given on, to what "
            "they were before it (files changed since are left alone and reported, unless "
            "--force), and/or cut the conversation back to before that turn."
        ),
        epilog="exit codes: 0 rewound, 1 some files left alone (conflicts), 2 usage error",
    )
    rewinding.add_argument("--session", required=True, help="the session (see `sessions`)")
    rewinding.add_argument("--turn", required=True, type=int, help="rewind to before this turn")
    what = rewinding.add_mutually_exclusive_group()
    for choice, meaning in (
        ("code", "the files only"),
        ("conversation", "the conversation only"),
        ("both", "the files and the conversation (the default)"),
    ):
        what.add_argument(
            f"--{choice}", dest="what", action="store_const", const=choice, help=meaning
        )
    rewinding.set_defaults(what=None)
    rewinding.add_argument(
        "--force", action="store_true", help="overwrite files changed since the turn"
    )
    rewinding.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="PATH",
        help="restore only this file (repeat for more; relative to --folder; files only)",
    )
    _add_client_flags(rewinding, "rewind")
    rewinding.set_defaults(run=_rewind)

    status = commands.add_parser("status", help="show the chosen provider and why")
    _add_client_flags(status, "status")
    status.set_defaults(run=_status)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or (
        arguments[0].startswith("--") and arguments[0] not in ("--help", "--version")
    ):
        arguments = ["serve", *arguments]
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        result: int = args.run(args)
    except KeyboardInterrupt:
        return Exit.CANCELLED
    except Exception as exc:  # noqa: BLE001 -- the boundary: one plain sentence, traceback on --debug
        if getattr(args, "debug", False):
            traceback.print_exc()
        return _report(exc)
    return result


def _report(exc: Exception) -> int:
    from rhema_lsp.jsonrpc.child import ServerGone

    if isinstance(exc, HeadlessError):
        sys.stderr.write(f"rhema-lsp: {exc}\n")
        return exc.exit_code
    if isinstance(exc, ServerGone):
        sys.stderr.write(
            f"rhema-lsp: {exc}; run `rhema-lsp serve` alone to see why, or add --debug\n"
        )
        return Exit.FAILED
    sys.stderr.write(f"rhema-lsp: {type(exc).__name__}: {exc} (add --debug for details)\n")
    return Exit.FAILED
