"""The ``rhema-lsp`` command: ``serve`` (the default, for editors) runs the
language server on stdio or TCP; the headless client's subcommands drive it
as an editor would."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rhema_lsp import __version__

__all__ = ["main"]


def _serve(args: argparse.Namespace) -> int:
    from rhema_lsp.server import create_server

    server = create_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rhema-lsp", description="An AI coding agent inside the editor, as a language server."
    )
    parser.add_argument("--version", action="version", version=f"rhema-lsp {__version__}")
    commands = parser.add_subparsers(dest="command")
    serve = commands.add_parser("serve", help="run the language server (the default)")
    serve.add_argument("--stdio", action="store_true", help="talk LSP on stdin/stdout (default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead, for debugging")
    serve.set_defaults(run=_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("--") and argv[0] not in ("--help", "--version")):
        argv = ["serve", *argv]
    args = parser.parse_args(argv)
    if getattr(args, "run", None) is None:
        parser.print_help()
        return 2
    result: int = args.run(args)
    return result
