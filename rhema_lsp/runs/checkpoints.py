"""The tools' journal, written to the session store as checkpoints.

:class:`StoreJournal` is the :class:`~rhema_lsp.tools.Journal` of a run:
before each change to a file it commits (durably, before the edit is sent)
the file's pre-image the first time the turn touches it, and marks the
file's change as being applied, its outcome unknown; after the editor
applied it, it commits the hash of what the file holds. A crash between the
two leaves the marker, which a rewind acts on (it restores the pre-image
whatever the file holds), so every change sent is rewindable. The turn is
the one the run id names (:class:`~rhema_lsp.runs.refs.TurnRef`). A store
failure becomes a tool error: before the change nothing is sent.
"""

from __future__ import annotations

from rhema_lsp.runs.points import CHANGE_APPLIED, CHANGE_PREPARED, CHANGE_RECORDED, PointHook
from rhema_lsp.runs.refs import TurnRef
from rhema_lsp.sessions import SessionStore, SessionStoreError
from rhema_lsp.tools import ToolError

__all__ = ["StoreJournal"]


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


class StoreJournal:
    """Checkpoints every change the tools make into ``store``; tells
    ``on_point`` the change points (:mod:`rhema_lsp.runs.points`)."""

    def __init__(self, store: SessionStore, on_point: PointHook | None = None) -> None:
        self.store = store
        self.on_point = on_point

    def _point(self, name: str) -> None:
        if self.on_point is not None:
            self.on_point(name)

    async def before_change(self, run_id: str, uri: str, text: str | None, *, clean: bool) -> None:
        """Store ``uri``'s pre-image for the run's turn (its first only) and
        mark its change as being applied."""
        ref = TurnRef.parse(run_id)
        try:
            await self.store.checkpoints.pre_image(
                ref.session, ref.turn, uri, _bytes(text), clean=clean
            )
        except SessionStoreError as exc:
            raise ToolError(
                f"could not checkpoint {uri} before changing it ({exc}); nothing was changed"
            ) from exc
        self._point(CHANGE_PREPARED)

    async def after_change(
        self,
        run_id: str,
        call_id: str,
        uri: str,
        before: str | None,
        after: str | None,
        kind: str,
    ) -> None:
        """Commit the hash of what ``uri`` holds now."""
        self._point(CHANGE_APPLIED)
        ref = TurnRef.parse(run_id)
        try:
            await self.store.checkpoints.post_image(ref.session, ref.turn, uri, _bytes(after))
        except SessionStoreError as exc:
            raise ToolError(
                f"the change to {uri} was applied but could not be recorded ({exc}); "
                "rewinding this turn restores the file as it was before the turn"
            ) from exc
        self._point(CHANGE_RECORDED)
