"""What each turn of a session changed, for the clients' diffs and pickers.

Per turn, per file: where its pre-image is (a ``rhema-checkpoint:`` URI that
``rhema.checkpointContent`` reads back) and how the file stands now: as the
agent's latest change left it (or, when the server died while applying
it, as it may have left it: a rewind restores it), changed since (by the
user, or outside the editor), or restored by a rewind; and per turn whether
it was cut short (``interrupted``: it never ended and is not running). A
client opens the diff from the checkpoint to the live file; rejecting a
hunk there (VS Code's "Revert Block", Neovim's ``:diffget``) is rewinding
that hunk.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from rhema_lsp.contract import (
    CHECKPOINT_SCHEME,
    ChangedFile,
    ChangesResult,
    TurnChanges,
)
from rhema_lsp.runs.rewind import current_bytes
from rhema_lsp.sessions import FileChange, SessionStore, content_hash
from rhema_lsp.tools import Editor, uri_to_path

__all__ = ["checkpoint_uri", "describe_changes", "parse_checkpoint_uri"]


def checkpoint_uri(session: str, turn: int, uri: str, blob: str) -> str:
    """The ``rhema-checkpoint:`` URI of ``uri``'s pre-image ``blob`` (the
    file's path, so editors pick its name and language)."""
    path = quote(uri_to_path(uri).as_posix())
    query = urlencode({"session": session, "turn": turn, "blob": blob})
    return f"{CHECKPOINT_SCHEME}:{path}?{query}"


def parse_checkpoint_uri(uri: str) -> tuple[str, str, Path]:
    """A checkpoint URI's session, blob and path.

    Raises
    ------
    ValueError
        Not a ``rhema-checkpoint:`` URI with a session and a blob.
    """
    parts = urlsplit(uri)
    query = parse_qs(parts.query)
    if parts.scheme != CHECKPOINT_SCHEME or "session" not in query or "blob" not in query:
        raise ValueError(f"`uri` {uri!r} is not a {CHECKPOINT_SCHEME}: URI from rhema.changes")
    blob = query["blob"][0]
    if len(blob) != 64 or any(c not in "0123456789abcdef" for c in blob):
        raise ValueError(f"`uri` {uri!r} names no checkpoint")
    return query["session"][0], blob, Path(unquote(parts.path))


def _status(change: FileChange) -> str:
    if change.before is None:
        return "created"
    if change.after is None:
        return "deleted"
    return "modified"


async def describe_changes(
    store: SessionStore,
    editor: Editor,
    session: str,
    turn: int | None,
    display: Callable[[Path], str],
) -> ChangesResult:
    """The turns of ``session`` (or only ``turn``) and their files.

    Raises
    ------
    SessionStoreError
        The session is unknown or the store unreadable.
    """
    turns = await store.checkpoints.turns(session)
    running = (await store.info(session)).running
    latest: dict[str, str | None] = {}
    unknown: dict[str, bool] = {}
    for summary in turns:
        for change in summary.files:
            if not change.rewound:
                latest[change.uri] = change.after
                unknown[change.uri] = not change.known
    now: dict[str, str | None] = {}
    for uri in latest:
        data = await current_bytes(editor, uri)
        now[uri] = None if data is None else content_hash(data)
    listed = []
    for summary in turns:
        if turn is not None and summary.turn != turn:
            continue
        files = []
        for change in summary.files:
            state = "restored"
            if not change.rewound:
                left = unknown[change.uri] or now[change.uri] == latest[change.uri]
                state = "asLeft" if left else "changed"
            files.append(
                ChangedFile.model_validate(
                    {
                        "uri": change.uri,
                        "path": display(uri_to_path(change.uri)),
                        "status": _status(change),
                        "before": None
                        if change.before is None
                        else checkpoint_uri(session, change.turn, change.uri, change.before),
                        "state": state,
                    }
                )
            )
        listed.append(
            TurnChanges(
                turn=summary.turn,
                title=summary.title,
                created_at=summary.created_at,
                in_conversation=summary.in_conversation,
                files=files,
                interrupted=not summary.ended and not (running and summary is turns[-1]),
            )
        )
    return ChangesResult(session=session, turns=listed)
