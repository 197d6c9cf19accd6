"""How a headless command ends: its exit codes, and the errors that choose one.

::

    Exit.OK         0    the model answered
    Exit.FAILED     1    a provider or tool failure; the server refused or went away
    Exit.USAGE      2    the command line, its folder or its environment cannot work
    Exit.STOPPED    3    stopped before an answer: the token or step limit
    Exit.CANCELLED  130  Ctrl-C

    HeadlessError        exit 1: the command could not be done
    └── UsageError       exit 2: fix the command line (the message names the flag)

Every message is one or two sentences in the terminal's words: it names flags
and environment variables, never the editor's settings.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["Exit", "HeadlessError", "UsageError"]


class Exit(IntEnum):
    """The exit codes of ``rhema-lsp ask``, ``sessions`` and ``status``."""

    OK = 0
    FAILED = 1
    USAGE = 2
    STOPPED = 3
    CANCELLED = 130


class HeadlessError(Exception):
    """The command could not be done; the message says what to do."""

    exit_code = Exit.FAILED


class UsageError(HeadlessError):
    """The command line, the folder or the environment is not usable."""

    exit_code = Exit.USAGE
