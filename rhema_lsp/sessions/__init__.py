"""Sessions persisted per workspace folder in SQLite, crash-safe through the
engine's commit hook and resume.

:class:`SessionStore` is the whole surface: open one per workspace folder,
create, list, load, commit (the engine's commit hook, the user's input, the
checkpoint after each round), lease a session to run it, and open it with
:meth:`SessionStore.open_and_resume`; fork it. ``store.checkpoints``
(:class:`Checkpoints`) keeps what each turn changed in the workspace and the
rewinds; ``store.choices`` (:class:`SessionChoices`) each session's mode,
model and thinking level as the user left them. Errors derive from
:class:`SessionStoreError`.
"""

from typing import TYPE_CHECKING

from rhema_lsp.lazy import lazy_root

if TYPE_CHECKING:
    from rhema_lsp.sessions.blobs import content_hash
    from rhema_lsp.sessions.checkpoints import (
        Checkpoints,
        FileChange,
        Restore,
        TurnSummary,
    )
    from rhema_lsp.sessions.choices import SessionChoices, StoredChoices
    from rhema_lsp.sessions.errors import (
        SessionBusyError,
        SessionConflictError,
        SessionStoreError,
        UnknownSessionError,
    )
    from rhema_lsp.sessions.images import referenced
    from rhema_lsp.sessions.leases import Lease
    from rhema_lsp.sessions.location import StoreLocation
    from rhema_lsp.sessions.records import SessionInfo, TurnStart, title_from_prompt
    from rhema_lsp.sessions.store import DEFAULT_LEASE_TTL, SessionStore, StoreEvent

__all__ = [
    "DEFAULT_LEASE_TTL",
    "Checkpoints",
    "FileChange",
    "Lease",
    "Restore",
    "SessionBusyError",
    "SessionChoices",
    "SessionConflictError",
    "SessionInfo",
    "SessionStore",
    "SessionStoreError",
    "StoreEvent",
    "StoreLocation",
    "StoredChoices",
    "TurnStart",
    "TurnSummary",
    "UnknownSessionError",
    "content_hash",
    "referenced",
    "title_from_prompt",
]

lazy_root(__name__)
