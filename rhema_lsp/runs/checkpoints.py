"""The tools' journal, written to the session store as checkpoints.

:class:`StoreJournal` is the :class:`~rhema_lsp.tools.Journal` of a run: the
first time a turn is about to change a file it stores the file's content
(the pre-image, durably, before the edit is sent), and after each applied
change the hash of what the file holds. The turn is the one the run id
names (:class:`~rhema_lsp.runs.refs.TurnRef`). A store failure becomes a
tool error: before the change nothing is sent.
"""

from __future__ import annotations

from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.sessions import SessionStore, SessionStoreError
from rhema_lsp.tools import ToolError

__all__ = ["StoreJournal"]


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


class StoreJournal:
    """Checkpoints every change the tools make into ``store``."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store

    async def before_change(self, run_id: str, uri: str, text: str | None, *, clean: bool) -> None:
        """Store ``uri``'s pre-image for the run's turn (its first only)."""
        ref = TurnRef.parse(run_id)
        try:
            await self.store.checkpoints.pre_image(
                ref.session, ref.turn, uri, _bytes(text), clean=clean
            )
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
        ref = TurnRef.parse(run_id)
        try:
            await self.store.checkpoints.post_image(ref.session, ref.turn, uri, _bytes(after))
        except SessionStoreError as exc:
            raise ToolError(
                f"the change to {uri} was applied but could not be recorded ({exc}); "
                "rewinding this turn will report it as a conflict"
            ) from exc
