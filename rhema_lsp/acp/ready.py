"""``rhema-lsp acp``'s first answers, before the ACP SDK loads: ``initialize``,
``session/new``, and the lifecycle gate in front of them.

Zed and JetBrains show a spinner until ``session/new`` answers, and the SDK's
import alone (its schema: a thousand pydantic models) takes a second or more;
so the door reads the client's first lines itself (:func:`answer_early`):

- Before ``initialize``, a request of any other method is refused (-32600,
  naming it: ``initialize`` comes first), a line that is no message is
  answered as the transport answers it, a notification or a response is
  dropped; the agent serves on.
- ``initialize`` with params the SDK takes as they are is answered with the
  SDK path's bytes (:mod:`~rhema_lsp.acp.handshake`); any other
  ``initialize`` is the SDK's, and so is everything after it.
- The next request, when it is a ``session/new`` whose params this module
  can vouch for (:func:`session_vouched`: the schema's fields and types
  only, stdio and HTTP MCP servers) and whose folders are roots the agent
  accepts (:func:`~rhema_lsp.acp.folders.folder_refusal`), is answered: a
  new session id, its modes and the options known without the provider
  (``mode``, ``thinking``, from the command line's flags). Anything else is
  the SDK's, whole. When nothing follows ``initialize`` at once, the door
  starts loading the agent meanwhile (``idle``), so a ``session/load`` that
  comes later does not wait for the whole load.

The wire of these answers is ours: no network probe, no model listing, no
store, no MCP server on this path. The ``model`` option needs the provider
resolved (which may probe the local ports) and its server's model list: it
follows as a ``config_option_update`` once the agent has loaded and taken
the session over (:func:`~rhema_lsp.acp.connection.connect`), with the
session's slash commands. The answer is, byte for byte, what the SDK path
answers when no provider is set up (no ``model`` option there either;
``tests/unit/acp/test_ready.py`` compares them).

Nothing is lost: the requests answered here reach the agent
(:class:`~rhema_lsp.acp.handshake.Greeting`, :class:`Opened`), and the bytes
read past the last answered line are handed on first. It imports nothing
of the SDK, no pydantic and no store.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rhema_lsp.acp.folders import folder_refusal
from rhema_lsp.acp.handshake import (
    FIRST_LINE_LIMIT,
    Greeting,
    encode_line,
    images_offered,
    initialize_result,
    terminal_auth,
    vouched,
)
from rhema_lsp.acp.offers import THINKING_LEVELS, option_entries, session_modes
from rhema_lsp.jsonrpc import INVALID_REQUEST, Refused, Request, error_reply, read_message
from rhema_lsp.vocabulary import MODES, Mode

if TYPE_CHECKING:
    from rhema_lsp.runs.settings import Thinking

__all__ = [
    "DEFAULT_MODE",
    "DEFAULT_THINKING",
    "IDLE",
    "Early",
    "Opened",
    "answer_early",
    "new_session_result",
    "session_vouched",
]

IDLE = 0.05
"""Seconds without a line after the ``initialize`` answer after which the
agent starts loading (see :func:`answer_early`)."""

Read = Callable[[], Awaitable[bytes]]
Write = Callable[[bytes], Awaitable[None]]

DEFAULT_MODE: Mode = "edit"
"""A new session's mode when the flags name none (the settings' default)."""

DEFAULT_THINKING: Thinking = "default"
"""A new session's thinking level when the flags name none."""


@dataclass(frozen=True, slots=True)
class Opened:
    """A ``session/new`` answered here, for the agent once it is loaded.

    Attributes
    ----------
    session_id
        The id given to the session.
    params
        The request's params, as the client sent them.
    result
        The result sent.
    """

    session_id: str
    params: dict[str, Any]
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Early:
    """What :func:`answer_early` answered, and the bytes the SDK must see."""

    greeting: Greeting | None
    opened: Opened | None
    rest: bytes


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and all(type(item) is str for item in value)


def _pairs(value: Any) -> bool:
    """A list of ``{name, value}`` objects (``EnvVariable``, ``HttpHeader``)."""
    return isinstance(value, list) and all(
        isinstance(item, dict)
        and type(item.get("name")) is str
        and type(item.get("value")) is str
        and item.keys() <= {"name", "value", "_meta"}
        and item.get("_meta") is None
        for item in value
    )


def _server(entry: Any) -> bool:
    """A stdio or HTTP MCP server entry of the schema, fields and types only."""
    if not isinstance(entry, dict) or type(entry.get("name")) is not str:
        return False
    if entry.get("_meta") is not None:
        return False
    if entry.get("type") == "http":
        return (
            entry.keys() <= {"type", "name", "url", "headers", "_meta"}
            and type(entry.get("url")) is str
            and _pairs(entry.get("headers"))
        )
    return (
        "type" not in entry
        and entry.keys() <= {"name", "command", "args", "env", "_meta"}
        and type(entry.get("command")) is str
        and _string_list(entry.get("args"))
        and _pairs(entry.get("env"))
    )


def session_vouched(params: Any) -> bool:
    """Whether ``session/new`` ``params`` are the schema's as they are: a
    string ``cwd``, ``mcpServers`` of stdio and HTTP entries, string
    ``additionalDirectories``, no ``_meta`` (see the module docstring)."""
    return (
        isinstance(params, dict)
        and params.keys() <= {"cwd", "mcpServers", "additionalDirectories", "_meta"}
        and type(params.get("cwd")) is str
        and isinstance(params.get("mcpServers"), list)
        and all(_server(entry) for entry in params["mcpServers"])
        and (
            params.get("additionalDirectories") is None
            or _string_list(params["additionalDirectories"])
        )
        and params.get("_meta") in (None, {})
    )


def _roots_accepted(params: dict[str, Any]) -> bool:
    """The session's folders are roots the agent takes (else the SDK path
    answers why not)."""
    folders = [params["cwd"], *(params.get("additionalDirectories") or [])]
    return all(folder_refusal(folder, "cwd")[1] is None for folder in folders)


def _starting(raw_settings: Mapping[str, Any]) -> tuple[Mode, Thinking]:
    """A new session's mode and thinking level, from the flags (a value the
    settings would refuse is left at its default, as they leave it)."""
    mode: Mode = DEFAULT_MODE
    for known in MODES:
        if raw_settings.get("mode") == known:
            mode = known
    thinking: Thinking = DEFAULT_THINKING
    for level in THINKING_LEVELS:
        if raw_settings.get("thinking") == level:
            thinking = level
    return mode, thinking


def new_session_result(session_id: str, mode: Mode, thinking: Thinking) -> dict[str, Any]:
    """The ``session/new`` result sent before the provider is resolved (in
    the SDK's field order): the options without ``model``."""
    return {
        "sessionId": session_id,
        "modes": session_modes(mode),
        "configOptions": option_entries(mode, None, [], thinking),
    }


class _Lines:
    """The client's lines, read as far as needed, and what is left."""

    def __init__(self, read: Read) -> None:
        self._read = read
        self.buffer = b""

    async def next(self, idle: Callable[[], None] | None = None) -> bytes | None:
        """The next line (without its newline), or ``None`` (the input ended,
        or the line is too long to take here): the buffer keeps it.
        ``idle`` is called when no bytes came within :data:`IDLE` seconds."""
        while b"\n" not in self.buffer:
            if len(self.buffer) > FIRST_LINE_LIMIT:
                return None
            reading = asyncio.ensure_future(self._read())
            if idle is not None:
                done, _ = await asyncio.wait({reading}, timeout=IDLE)
                if not done:
                    idle()
                idle = None
            chunk = await reading  # never cancelled: a read in flight keeps its bytes
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def back(self, line: bytes) -> bytes:
        """Everything from ``line`` on, for the SDK."""
        return line + b"\n" + self.buffer


async def _before_initialize(
    lines: _Lines, write: Write, images: bool
) -> tuple[Greeting | None, bytes | None]:
    """Serve the lines up to ``initialize`` (see the module docstring): the
    greeting answered, or ``None`` and the bytes to hand on."""
    while True:
        line = await lines.next()
        if line is None:
            return None, lines.buffer
        if not line.strip():
            continue
        message = read_message(line, null_id=True)
        if isinstance(message, Refused):
            if message.answer:
                await write(encode_line(message.reply()))
            continue
        if not isinstance(message, Request):
            continue  # a notification or a response before initialize: dropped
        if message.method != "initialize":
            refusal = (
                f"Invalid request: {message.method} before initialize "
                "(the agent is not initialized: send initialize first)"
            )
            await write(encode_line(error_reply(message.id, INVALID_REQUEST, refusal)))
            continue
        if message.id is None or not (isinstance(message.params, dict) and vouched(message.params)):
            return None, lines.back(line)
        result = initialize_result(images, terminal_auth(message.params))
        await write(encode_line({"jsonrpc": "2.0", "id": message.id, "result": result}))
        return Greeting(message.params, result), None


async def answer_early(
    read: Read,
    write: Write,
    raw_settings: Mapping[str, Any],
    idle: Callable[[], None] | None = None,
) -> Early:
    """Answer the client's first requests before the SDK loads (see the
    module docstring).

    Parameters
    ----------
    raw_settings
        The command line's settings: whether a prompt may hold images, a new
        session's mode and thinking level.
    idle
        Called once when nothing follows the ``initialize`` answer within
        :data:`IDLE` seconds (the client is not opening a session now: the
        door starts loading the agent; a ``session/new`` that comes later
        is still answered here).
    """
    lines = _Lines(read)
    greeting, rest = await _before_initialize(lines, write, images_offered(raw_settings))
    if greeting is None:
        return Early(None, None, rest or b"")
    line = await lines.next(idle)
    while line is not None and not line.strip():
        line = await lines.next()
    if line is None:
        return Early(greeting, None, lines.buffer)
    message = read_message(line, null_id=True)
    if not (
        isinstance(message, Request)
        and message.method == "session/new"
        and session_vouched(message.params)
        and isinstance(message.params, dict)
        and _roots_accepted(message.params)
    ):
        return Early(greeting, None, lines.back(line))
    session_id = os.urandom(8).hex()
    result = new_session_result(session_id, *_starting(raw_settings))
    await write(encode_line({"jsonrpc": "2.0", "id": message.id, "result": result}))
    return Early(greeting, Opened(session_id, message.params, result), lines.buffer)
