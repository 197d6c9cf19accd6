"""How long a run waits for its MCP servers to start, and the servers
remembered as too slow to wait for.

A run waits once for the servers in their first attempt
(:func:`wait_started`): at most the start bound (``mcpStartTimeout`` plus a
margin), or, when the process asks for less, that: ``rhema-lsp ask``, a
process per question, sets :data:`~rhema_lsp.vocabulary.MCP_RUN_WAIT_ENV`
for the server it starts (:data:`~rhema_lsp.vocabulary.ASK_MCP_WAIT_S`).
A server still starting afterwards goes on starting in the background;
its tools join the run's next request once it is ready (the resolver
offers again whenever a server's state changes).

A server waiting for the user to sign in (``authorizing``) is waited for
only when the process says someone is there to do it:
:data:`~rhema_lsp.vocabulary.MCP_SIGN_IN_WAIT_ENV` (``rhema-lsp ask`` in a
terminal) gives how long (:func:`sign_in_wait`); the page was shown already
(the editor opened it, the terminal printed it). Otherwise, and after that
bound, the log says plainly that the server's tools are missing from the run
and how to sign in.

A server that did not start while a run waited for it (still starting, or
failed with its start bound run out) is remembered for
:data:`REMEMBER_S` in the user state directory (:class:`SlowStarts`,
``mcp-slow-starts.json``, by server name and entry, so a changed entry is
forgotten): the next runs, in this process or the next, start it in the
background without waiting for it; once it is ready it is forgotten. A
health check (``rhema-lsp status``) or a sign-in always waits the whole
bound.

The rules it keeps: the file holds a hash of each server's name and entry and a time,
never an entry's values (no secret); it is read and written off the event
loop, written whole (a temporary file renamed), and a file that is not what
this module writes is ignored as empty; nothing here starts or stops a
server.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from platformdirs import user_state_dir

from rhema_lsp.vocabulary import MCP_RUN_WAIT_ENV, MCP_SIGN_IN_WAIT_ENV

if TYPE_CHECKING:
    from rhema_lsp.mcp.connection import McpConnection

__all__ = [
    "REMEMBER_S",
    "SLOW_FILE",
    "SlowStarts",
    "run_wait",
    "sign_in_wait",
    "wait_started",
]

logger = logging.getLogger("rhema_lsp.mcp.hub")

REMEMBER_S = 15 * 60.0
"""Seconds a server too slow to start is remembered (not waited for)."""

SLOW_FILE = "mcp-slow-starts.json"
"""The file, in the user state directory, of the servers remembered."""

_MAX_ENTRIES = 200


def run_wait(environ: Mapping[str, str]) -> float | None:
    """The cap :data:`~rhema_lsp.vocabulary.MCP_RUN_WAIT_ENV` sets in
    ``environ`` (``None``: unset or not a number from 0 to 600)."""
    try:
        value = float(environ.get(MCP_RUN_WAIT_ENV, ""))
    except ValueError:
        return None
    return value if 0 <= value <= 600 else None


def sign_in_wait(environ: Mapping[str, str]) -> float:
    """How long a run may wait for a sign-in
    (:data:`~rhema_lsp.vocabulary.MCP_SIGN_IN_WAIT_ENV`; 0: unset, or not a
    number from 0 to 600)."""
    try:
        value = float(environ.get(MCP_SIGN_IN_WAIT_ENV, ""))
    except ValueError:
        return 0.0
    return value if 0 <= value <= 600 else 0.0


def _key(connection: McpConnection) -> str:
    entry = connection.config.model_dump_json()
    return hashlib.sha256(f"{connection.name}\0{entry}".encode()).hexdigest()[:32]


def _read(path: Path) -> dict[str, float]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        key: float(when)
        for key, when in data.items()
        if isinstance(key, str) and type(when) in (int, float)
    }


def _write(path: Path, entries: dict[str, float]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        temporary.write_text(json.dumps(entries), encoding="utf-8")
        temporary.replace(path)
    except OSError as exc:
        logger.info("the MCP servers slow to start are not remembered: %s", exc)


class SlowStarts:
    """The servers remembered as too slow to wait for (see the module docstring).

    Parameters
    ----------
    state_dir
        The user state directory (default: the platform's).
    """

    def __init__(self, state_dir: Path | None = None) -> None:
        folder = state_dir or Path(user_state_dir("rhema-lsp", appauthor=False))
        self.path = folder / SLOW_FILE
        self._entries: dict[str, float] | None = None

    async def _loaded(self) -> dict[str, float]:
        if self._entries is None:
            self._entries = await anyio.to_thread.run_sync(_read, self.path)
        return self._entries

    async def slow(self, connection: McpConnection) -> bool:
        """Whether ``connection`` is remembered as too slow to wait for."""
        when = (await self._loaded()).get(_key(connection))
        return when is not None and 0 <= time.time() - when < REMEMBER_S

    async def note(self, connections: Sequence[McpConnection]) -> None:
        """Remember the servers that did not start while a run waited (see
        the module docstring); forget those ready."""
        entries = await self._loaded()
        before = dict(entries)
        now = time.time()
        for connection in connections:
            key, state = _key(connection), connection.state.value
            timed_out = state == "failed" and "did not finish starting" in (connection.error or "")
            if state == "ready":
                entries.pop(key, None)
            elif (state == "starting" or timed_out) and key not in entries:
                entries[key] = now
        for key in [k for k, when in entries.items() if not 0 <= now - when < REMEMBER_S]:
            del entries[key]
        if len(entries) > _MAX_ENTRIES:
            for key in sorted(entries, key=entries.__getitem__)[: len(entries) - _MAX_ENTRIES]:
                del entries[key]
        if entries != before:
            await anyio.to_thread.run_sync(_write, self.path, dict(entries))


async def wait_started(
    connections: Sequence[McpConnection],
    bound: float,
    slow: SlowStarts,
    cap: float | None,
    sign_in: bool = False,
    check: bool = False,
    signing_in_s: float = 0.0,
) -> None:
    """Wait for ``connections`` in their first attempt (with ``sign_in``,
    while the user signs in too): at most ``bound`` seconds, or ``cap`` when
    it is smaller; not for a server remembered as slow. A health check
    (``check``) or a sign-in waits the whole ``bound`` for every server.
    Then wait up to ``signing_in_s`` for the servers awaiting a sign-in,
    log each one not ready, and remember the slow."""
    patient = check or sign_in
    waited = [c for c in connections if patient or not await slow.slow(c)]
    limit = bound if patient or cap is None else min(bound, cap)
    with anyio.move_on_after(limit):
        async with anyio.create_task_group() as group:
            for connection in waited:
                group.start_soon(partial(connection.wait_started, sign_in=sign_in))
    await _wait_signing_in(connections, 0.0 if sign_in else signing_in_s)
    for connection in connections:
        state = connection.state.value
        if state == "authorizing":
            logger.warning(
                "MCP server %s needs you to sign in, so its tools are missing from this run: "
                "%s; then ask again (or sign in first with `rhema-lsp status`)",
                connection.name,
                connection.error or "open its sign-in page",
            )
        elif state == "starting":
            logger.warning(
                "MCP server %s is still starting; its tools join the run once it is ready",
                connection.name,
            )
        elif state != "ready":
            logger.warning(
                "MCP server %s is %s, its tools are not offered this turn: %s",
                connection.name,
                state,
                connection.error or "no reason given",
            )
    await slow.note(connections)


async def _wait_signing_in(connections: Sequence[McpConnection], bound: float) -> None:
    """Wait up to ``bound`` seconds while servers await the user's sign-in."""
    signing_in = [c for c in connections if c.state.value == "authorizing"]
    if not signing_in or bound <= 0:
        return
    logger.warning(
        "waiting up to %g s for you to sign in to the MCP server(s) %s (the page is above)",
        bound,
        ", ".join(c.name for c in signing_in),
    )
    with anyio.move_on_after(bound):
        async with anyio.create_task_group() as group:
            for connection in signing_in:
                group.start_soon(partial(connection.wait_started, sign_in=True))
