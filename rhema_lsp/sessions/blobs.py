"""Content-addressed file images: stored once, compressed, often as a delta.

A blob is named by the SHA-256 of its bytes (:func:`content_hash`), so the
same content is stored once however many turns, sessions or paths hold it.
Its ``body`` is zlib-compressed, and is either the whole content or, when
that is smaller, a line delta on a ``base`` blob (usually the previous image
of the same file): a JSON list of ``[start, end]`` (copy these lines of the
base) and strings (literal text). Chains stop at :data:`MAX_DEPTH` deltas,
so reading a blob decodes at most that many.

Blobs are append-only: :func:`put_blob` inserts or finds, never rewrites.
Every function runs on a connection inside the caller's transaction.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import sqlite3
import zlib

from rhema_lsp.sessions.errors import SessionStoreError

__all__ = ["MAX_DELTA_LINES", "MAX_DEPTH", "content_hash", "get_blob", "put_blob"]

MAX_DEPTH = 40
"""The longest chain of deltas before a blob is stored whole again."""

MAX_DELTA_LINES = 20_000
"""Files with more lines than this are stored whole (the diff would be slow)."""

_LEVEL = 6


def content_hash(data: bytes) -> str:
    """The blob name of ``data``: its SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


def _delta(base: bytes, data: bytes) -> bytes | None:
    """``data`` as a line delta on ``base``; ``None`` when either is not UTF-8
    text or too long to diff."""
    try:
        old = base.decode("utf-8").splitlines(keepends=True)
        new = data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None
    if len(old) > MAX_DELTA_LINES or len(new) > MAX_DELTA_LINES:
        return None
    ops: list[list[int] | str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            ops.append([i1, i2])
        elif j2 > j1:
            ops.append("".join(new[j1:j2]))
    return json.dumps(ops, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _apply_delta(base: bytes, delta: bytes) -> bytes:
    old = base.decode("utf-8").splitlines(keepends=True)
    pieces: list[str] = []
    for op in json.loads(delta):
        if isinstance(op, str):
            pieces.append(op)
        else:
            start, end = op
            pieces.extend(old[start:end])
    return "".join(pieces).encode("utf-8")


def put_blob(conn: sqlite3.Connection, data: bytes, base: str | None = None) -> str:
    """Store ``data`` (once) and return its hash.

    Parameters
    ----------
    base
        The hash of a stored blob ``data`` probably resembles (the previous
        image of the same file); a delta on it is kept when smaller.
    """
    name = content_hash(data)
    if conn.execute("SELECT 1 FROM blobs WHERE hash = ?", (name,)).fetchone() is not None:
        return name
    body = zlib.compress(data, _LEVEL)
    stored_base: str | None = None
    depth = 0
    if base is not None and base != name:
        row = conn.execute("SELECT depth FROM blobs WHERE hash = ?", (base,)).fetchone()
        if row is not None and int(row[0]) < MAX_DEPTH:
            delta = _delta(get_blob(conn, base), data)
            if delta is not None:
                packed = zlib.compress(delta, _LEVEL)
                if len(packed) < len(body):
                    body, stored_base, depth = packed, base, int(row[0]) + 1
    conn.execute(
        "INSERT INTO blobs (hash, size, base, depth, body) VALUES (?, ?, ?, ?, ?)",
        (name, len(data), stored_base, depth, body),
    )
    return name


def get_blob(conn: sqlite3.Connection, name: str) -> bytes:
    """The bytes of blob ``name``, checked against their hash.

    Raises
    ------
    SessionStoreError
        No such blob, or it does not decode to content with its hash (a
        damaged store): nothing is guessed.
    """
    chain: list[tuple[str, str | None, bytes]] = []
    current: str | None = name
    while current is not None:
        row = conn.execute("SELECT base, body FROM blobs WHERE hash = ?", (current,)).fetchone()
        if row is None:
            raise SessionStoreError(
                f"checkpoint {current[:12]} is missing from the session store; "
                "the file cannot be restored from it"
            )
        chain.append((current, row[0], bytes(row[1])))
        current = row[0]
        if len(chain) > MAX_DEPTH + 1:
            raise SessionStoreError(f"checkpoint {name[:12]} has a broken delta chain")
    data = b""
    try:
        for blob_name, blob_base, body in reversed(chain):
            raw = zlib.decompress(body)
            data = raw if blob_base is None else _apply_delta(data, raw)
            if content_hash(data) != blob_name:
                raise SessionStoreError(f"checkpoint {blob_name[:12]} is damaged (hash mismatch)")
    except (zlib.error, ValueError, TypeError) as exc:
        raise SessionStoreError(f"checkpoint {name[:12]} cannot be decoded: {exc}") from exc
    return data
