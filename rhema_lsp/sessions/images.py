"""Images in stored messages: the bytes once in the blobs, a reference in the row.

:func:`stored_body` is the JSON of a message as its row holds it: each
image's bytes go to the content-addressed blobs (:mod:`.blobs`, the table
checkpoints use; the same image in many turns or sessions is stored once)
and the part keeps ``sha256`` with ``data`` empty. :func:`loaded_message`
reads a row back, filling each image's ``data`` from its blob (which
:func:`~.blobs.get_blob` checks against its hash). A missing or damaged image blob is a
:class:`~rhema_lsp.sessions.errors.SessionStoreError` naming it: nothing
is guessed. Both run inside the caller's transaction.
:func:`referenced` is a message as a client is shown it: each image by its
reference alone (``sha256``, ``size``, ``name``), so reopening a session
with many screenshots does not send their bytes to the editor again.
"""

from __future__ import annotations

import base64
import sqlite3
from collections.abc import Callable
from functools import partial

from rhema_lsp.engine import ImagePart, Message, ToolResult
from rhema_lsp.sessions.blobs import get_blob, put_blob
from rhema_lsp.sessions.errors import SessionStoreError

__all__ = ["loaded_message", "referenced", "stored_body"]

_MARK = '"type":"image"'
"""What every row holding an image contains (pydantic writes compact JSON)."""


def _stored(conn: sqlite3.Connection, image: ImagePart) -> ImagePart:
    if not image.data:
        return image  # already a reference (read back, resent)
    raw = image.raw()
    name = put_blob(conn, raw)
    return image.model_copy(update={"data": "", "sha256": name, "size": len(raw)})


def _loaded(conn: sqlite3.Connection, image: ImagePart) -> ImagePart:
    if image.data or not image.sha256:
        return image
    try:
        raw = get_blob(conn, image.sha256)
    except SessionStoreError as exc:
        raise SessionStoreError(
            f"image {image.name or image.sha256[:12]} of the session cannot be read "
            f"from the store ({exc}); rewind the conversation before it to go on"
        ) from exc
    return image.model_copy(update={"data": base64.b64encode(raw).decode("ascii")})


def _reference(image: ImagePart) -> ImagePart:
    return image.model_copy(update={"data": ""}) if image.data else image


def _map(message: Message, change: Callable[[ImagePart], ImagePart]) -> Message:
    content = []
    changed = False
    for part in message.content:
        new = part
        if isinstance(part, ImagePart):
            new = change(part)
        elif isinstance(part, ToolResult) and part.images:
            images = tuple(change(image) for image in part.images)
            if images != part.images:
                new = part.model_copy(update={"images": images})
        changed = changed or new is not part
        content.append(new)
    return message.model_copy(update={"content": content}) if changed else message


def stored_body(conn: sqlite3.Connection, message: Message) -> str:
    """The row JSON of ``message``, its images' bytes put in the blobs."""
    return _map(message, partial(_stored, conn)).model_dump_json()


def loaded_message(conn: sqlite3.Connection, body: str | bytes) -> Message:
    """The message a row holds, its images' bytes read from the blobs.

    Raises
    ------
    pydantic.ValidationError
        The row does not parse.
    SessionStoreError
        An image's blob is missing or damaged.
    """
    message = Message.model_validate_json(body)
    text = body if isinstance(body, str) else body.decode("utf-8", "replace")
    return _map(message, partial(_loaded, conn)) if _MARK in text else message


def referenced(message: Message) -> Message:
    """``message`` with each image's bytes left out (``data`` empty; its
    ``sha256``, ``size`` and ``name`` kept): what a client is shown."""
    return _map(message, _reference)
