"""Why a server attempt failed, and whether trying again may help.

:func:`classify` is the one place an attempt's exception becomes a reason
the user reads (in ``rhema.status``, in a call's in-band error) and a
verdict: *retryable* (a crash, a hang at ``initialize``, a refused
connection: the back-off tries again) or not (no such command, a refused
entry, a sign-in that did not complete: trying again would fail the same
way, or send the user to a sign-in page again and again).
"""

from __future__ import annotations

import errno
from dataclasses import dataclass

from mcp.client.auth import OAuthFlowError

from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.errors import McpUnavailable, McpUnstartable
from rhema_lsp.mcp.transports import HttpFailure

__all__ = [
    "BACKOFF_MAX_S",
    "BACKOFF_S",
    "Failure",
    "backoff_delay",
    "classify",
    "describe",
    "innermost",
]

BACKOFF_S = 0.5
BACKOFF_MAX_S = 30.0
_UNSTARTABLE_ERRNOS = frozenset({errno.ENOENT, errno.EACCES, errno.ENOTDIR, errno.ENOEXEC})


@dataclass(frozen=True, slots=True)
class Failure:
    """An attempt's failure: what the user reads, and whether to try again."""

    reason: str
    retryable: bool


def backoff_delay(failures: int) -> float:
    """Seconds to wait before restart number ``failures``."""
    return float(min(BACKOFF_S * 2 ** max(failures - 1, 0), BACKOFF_MAX_S))


def classify(
    exc: BaseException,
    config: McpServerConfig,
    *,
    start_timeout: float,
    signing_in: bool,
    http: HttpFailure | None,
) -> Failure:
    """Why an attempt at ``config`` failed with ``exc``.

    Parameters
    ----------
    start_timeout
        The attempt's start bound (named when it was exceeded).
    signing_in
        Whether the attempt had sent the user to an OAuth sign-in page.
    http
        The attempt's last HTTP error, if any.
    """
    inner = innermost(exc)
    if isinstance(inner, McpUnstartable):
        return Failure(str(inner), False)
    if isinstance(inner, OAuthFlowError) or signing_in:
        status = f" ({http.describe()})" if http else ""
        return Failure(
            f"signing in did not complete: {describe(inner)}{status}; restart the server "
            "(rhema.mcpRestart, or rhema-lsp status) to sign in again",
            False,
        )
    if isinstance(inner, TimeoutError):
        return Failure(
            f"it did not finish starting (initialize and list its tools) within "
            f"{start_timeout:g} s: check that it is an MCP server, or raise "
            "the mcpStartTimeout setting",
            True,
        )
    if isinstance(inner, OSError) and config.command:
        why = f"could not start {config.describe()!r}: {inner.strerror or inner}"
        return Failure(why, inner.errno not in _UNSTARTABLE_ERRNOS)
    if isinstance(inner, McpUnavailable):
        return Failure(str(inner), True)
    if http is not None:
        return Failure(f"{describe(inner)} ({http.describe()})", True)
    return Failure(describe(inner), True)


def innermost(exc: BaseException) -> BaseException:
    """The one exception a group of one wraps (task groups wrap what they raise)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    """One line for an exception, the innermost of a group."""
    inner = innermost(exc)
    text = str(inner) or type(inner).__name__
    return text.splitlines()[0][:300]
