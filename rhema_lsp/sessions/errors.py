"""Why the session store failed: one root, mapped at the boundary.

::

    SessionStoreError          the root: the database could not be used
    ├── UnknownSessionError    no session with that id in this folder's store
    ├── SessionBusyError       another holder (usually another window) runs it
    └── SessionConflictError   the stored history no longer extends this copy

Every ``sqlite3.Error`` leaving the layer is turned into a
:class:`SessionStoreError` (``raise ... from exc``) naming what was being
done; each message says what the user can do next.
"""

from __future__ import annotations

__all__ = [
    "SessionBusyError",
    "SessionConflictError",
    "SessionStoreError",
    "UnknownSessionError",
]


class SessionStoreError(Exception):
    """The root of every session-store failure."""


class UnknownSessionError(SessionStoreError):
    """No session ``session_id`` in the store of ``folder``."""

    def __init__(self, session_id: str, folder: str) -> None:
        super().__init__(f"no session {session_id} in {folder}")
        self.session_id = session_id
        self.folder = folder


class SessionBusyError(SessionStoreError):
    """The session is leased by a live holder other than the caller.

    Parameters
    ----------
    session_id
        The session asked for.
    pid
        The holder's process id.
    same_process
        Whether the holder is this very process (a second run of the session
        in the same window) rather than another window.
    ttl
        Seconds after which a crashed holder's lease expires.
    """

    def __init__(self, session_id: str, pid: int, *, same_process: bool, ttl: float) -> None:
        if same_process:
            message = (
                f"session {session_id} is already running in this window (process {pid}); "
                "wait for that run to finish or cancel it, then try again"
            )
        else:
            message = (
                f"session {session_id} is open in another window (process {pid}); "
                "finish or cancel it there, or open it read-only here. If that window "
                f"crashed, its claim expires within {ttl:.0f} s."
            )
        super().__init__(message)
        self.session_id = session_id
        self.pid = pid
        self.same_process = same_process


class SessionConflictError(SessionStoreError):
    """The stored history diverged from the copy being committed (another
    process appended to it, or the copy was edited): nothing was written."""

    def __init__(self, session_id: str, detail: str) -> None:
        super().__init__(
            f"session {session_id} changed on disk since this window loaded it ({detail}); "
            "nothing was saved. Reopen the session to continue from what is stored."
        )
        self.session_id = session_id
