"""How a command fails, as the protocol layer maps it to JSON-RPC.

::

    CommandError
    ├── BadArguments     -> InvalidParams: a field is missing, wrong or names
    │                       nothing (a folder outside the workspace, ...)
    └── CommandFailed    -> RequestFailed: valid, but not possible now (an
                            unknown session, a session busy elsewhere, ...)

Kept free of heavy imports: the server loads it at start-up.
"""

from __future__ import annotations

__all__ = ["BadArguments", "CommandError", "CommandFailed"]


class CommandError(Exception):
    """The root of command failures."""


class BadArguments(CommandError):
    """The arguments are wrong; the message names the field."""


class CommandFailed(CommandError):
    """The command is valid but cannot be served now; the message says why."""
