"""The ``rhema-lsp`` command.

``serve`` (the default with no subcommand, for editors) runs the language
server on stdio, or on TCP for debugging; ``acp`` runs the Agent Client
Protocol agent on stdio, for ACP editors (Zed, JetBrains, ...). ``ask``, ``sessions`` and
``status`` are the headless client: they start the server as a child process
and drive it as an editor would. Errors are one plain sentence saying what
to do; ``--debug`` adds the traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rhema_lsp import __version__

__all__ = ["main"]

EXIT_USAGE = 2


def _serve(args: argparse.Namespace) -> int:
    from rhema_lsp.server import create_server

    server = create_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            raise _Usage(f"--tcp takes HOST:PORT, not {args.tcp!r}")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0


def _acp(args: argparse.Namespace) -> int:
    from rhema_lsp.acp import serve
    from rhema_lsp.runs.settings import parse_settings

    raw = {
        "provider": args.provider,
        "model": args.model,
        "baseUrl": args.base_url,
        "protocol": args.protocol,
        "mode": args.mode,
        "thinking": args.thinking,
        "maxSteps": args.max_steps,
        "maxTokens": args.max_tokens,
        "sessionStore": args.session_store,
        "commandAllowlist": args.allow or None,
        "logLevel": args.log_level,
    }
    settings, problems = parse_settings(raw)
    for problem in problems:
        sys.stderr.write(f"rhema-lsp acp: {problem}\n")
    asyncio.run(serve(settings))
    return 0


class _Usage(Exception):
    """A command-line mistake (exit code 2)."""


def _client_options(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(args.folder).expanduser().resolve()
    return {
        "folder": folder,
        "provider": args.provider,
        "model": args.model,
        "base_url": args.base_url,
        "protocol": args.protocol,
        "thinking": getattr(args, "thinking", None),
        "debug": args.debug,
    }


def _ask(args: argparse.Namespace) -> int:
    from rhema_lsp.headless.run import AskOptions, ask

    if args.session and args.resume_last:
        raise _Usage("--session and --continue exclude each other: pick one")
    options = AskOptions(
        **_client_options(args),
        prompt=args.prompt,
        files=tuple(args.file),
        mode=args.mode,
        session=args.session,
        resume_last=args.resume_last,
        max_steps=args.max_steps,
        json=args.json,
        yes=args.yes,
        show_thinking=not args.no_thinking,
    )
    return asyncio.run(ask(options))


def _sessions(args: argparse.Namespace) -> int:
    from rhema_lsp.headless.run import ClientOptions, sessions

    return asyncio.run(sessions(ClientOptions(**_client_options(args)), args.json))


def _status(args: argparse.Namespace) -> int:
    from rhema_lsp.headless.run import ClientOptions, status

    return asyncio.run(status(ClientOptions(**_client_options(args)), args.json))


def _add_client_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--folder", default=".", help="the workspace folder (default: here)")
    parser.add_argument(
        "--provider",
        help="a preset: openai, anthropic, gemini, openrouter, "
        "groq, ollama, lmstudio, llamacpp, vllm, embedded, or custom",
    )
    parser.add_argument("--model", help="the model id")
    parser.add_argument("--base-url", help="the endpoint (with --provider custom)")
    parser.add_argument(
        "--protocol",
        choices=["openai", "anthropic", "gemini"],
        help="the wire of a custom endpoint",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")


def build_parser() -> argparse.ArgumentParser:
    """The command line, with its subcommands."""
    parser = argparse.ArgumentParser(
        prog="rhema-lsp",
        description="An AI coding agent inside the editor, as a language server.",
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
    acp.add_argument("--provider", help="a provider preset (see `ask --help`), or custom")
    acp.add_argument("--model", help="the model id")
    acp.add_argument("--base-url", help="the endpoint (with --provider custom)")
    acp.add_argument("--protocol", choices=["openai", "anthropic", "gemini"])
    acp.add_argument(
        "--mode", choices=["ask", "edit", "agent"], help="each new session's mode (default: edit)"
    )
    acp.add_argument("--thinking", choices=["default", "low", "medium", "high"])
    acp.add_argument("--max-steps", type=int, help="the step limit of a turn (default 25)")
    acp.add_argument("--max-tokens", type=int, help="output tokens per model call (default 4096)")
    acp.add_argument("--session-store", choices=["workspace", "user"])
    acp.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="COMMAND",
        help="a command run_command may run without asking (repeatable)",
    )
    acp.add_argument("--log-level", choices=["error", "warning", "info", "debug"])
    acp.add_argument("--debug", action="store_true", help="show tracebacks")
    acp.set_defaults(run=_acp)

    ask = commands.add_parser("ask", help="ask the agent once, headless")
    ask.add_argument("prompt", help="what to ask or do")
    _add_client_flags(ask)
    ask.add_argument(
        "--mode",
        choices=["ask", "edit", "agent"],
        default="ask",
        help="ask: read only (default); edit: change files; agent: also run commands",
    )
    ask.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="attach a file's text to the prompt (repeatable)",
    )
    ask.add_argument("--session", help="continue this session")
    ask.add_argument(
        "--continue",
        dest="resume_last",
        action="store_true",
        help="continue the most recent session of the folder",
    )
    ask.add_argument("--thinking", choices=["default", "low", "medium", "high"])
    ask.add_argument("--max-steps", type=int, help="the step limit of the turn")
    ask.add_argument("--yes", action="store_true", help="approve every confirmation")
    ask.add_argument("--no-thinking", action="store_true", help="hide the model's reasoning")
    ask.set_defaults(run=_ask)

    listing = commands.add_parser("sessions", help="list the folder's sessions")
    _add_client_flags(listing)
    listing.set_defaults(run=_sessions)

    status = commands.add_parser("status", help="show the resolved provider and its source")
    _add_client_flags(status)
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
        return 130
    except Exception as exc:  # noqa: BLE001 -- the boundary: one plain sentence, traceback on --debug
        if getattr(args, "debug", False):
            traceback.print_exc()
        return _report(exc)
    return result


def _report(exc: Exception) -> int:
    from rhema_lsp.headless.jsonrpc import ServerGone
    from rhema_lsp.headless.run import UsageError

    if isinstance(exc, _Usage | UsageError):
        sys.stderr.write(f"rhema-lsp: {exc}\n")
        return EXIT_USAGE
    if isinstance(exc, ServerGone):
        sys.stderr.write(
            f"rhema-lsp: {exc}; run `rhema-lsp serve` alone to see why, or add --debug\n"
        )
        return 1
    sys.stderr.write(f"rhema-lsp: {type(exc).__name__}: {exc} (add --debug for details)\n")
    return 1
