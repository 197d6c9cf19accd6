"""The tools' journal, written to the session store as checkpoints.

:class:`StoreJournal` is the :class:`~rhema_lsp.tools.Journal` of a run: the
first time a turn is about to change a file it stores the file's content
(the pre-image, durably, before the edit is sent), and after each applied
change the hash of what the file holds. The turn is the run id's
(``"<session>:<turn>"``, as every front door builds it). A store failure
becomes a tool error: before the change nothing is sent.
"""

from __future__ import annotations

from rhema_lsp.sessions import SessionStore, SessionStoreError
from rhema_lsp.tools import ToolError

__all__ = ["StoreJournal", "parse_run_id"]


def parse_run_id(run_id: str) -> tuple[str, int]:
    """``"<session>:<turn>"`` as its parts.

    Raises
    ------
    ValueError
        ``run_id`` is not of that form.
    """
    session, _, turn = run_id.rpartition(":")
    if not session or not turn.isdigit() or int(turn) < 1:
        raise ValueError(f"run id {run_id!r} does not name a session's turn")
    return session, int(turn)


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


class StoreJournal:
    """Checkpoints every change the tools make into ``store``."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store

    async def before_change(self, run_id: str, uri: str, text: str | None, *, clean: bool) -> None:
        """Store ``uri``'s pre-image for the run's turn (its first only)."""
        session, turn = parse_run_id(run_id)
        try:
            await self.store.checkpoints.pre_image(session, turn, uri, _bytes(text), clean=clean)
        except SessionStoreError as exc:
            raise ToolError(
                f"could not checkpoint {uri} before changing it ({exc}); nothing was changed"
            ) from exc

    async def after_change(
        self,
        run_id: str,
        call_id: str,
        uri: str,
        before: str | None,
        after: str | None,
        kind: str,
    ) -> None:
        """Record the hash of what ``uri`` holds now."""
        session, turn = parse_run_id(run_id)
        try:
            await self.store.checkpoints.post_image(session, turn, uri, _bytes(after))
        except SessionStoreError as exc:
            raise ToolError(
                f"the change to {uri} was applied but could not be recorded ({exc}); "
                "rewinding this turn will report it as a conflict"
            ) from exc
