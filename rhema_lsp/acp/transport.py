"""The agent's side of the wire: one JSON object per line, every line checked
before the ACP SDK sees it.

:class:`LineTransport` is a message-level transport of the SDK's
``Connection`` (its ``Transport`` seam: ``receive``, ``send``, ``close``),
over byte functions (:mod:`rhema_lsp.jsonrpc.stdio` on stdin and stdout,
whatever they are: a file as stdout works). It corrects what the SDK's own
stdio path gets wrong (agent-client-protocol 0.12):

- A line that is not a JSON object killed the agent (``42``, ``[]``, a
  batch: "AttributeError: 'list' object has no attribute 'get'") or ended
  the connection silently (``null``); a malformed line, invalid UTF-8 or
  deep nesting got no answer. Each line now crosses
  :func:`~rhema_lsp.jsonrpc.read_message` and a refused one is answered
  (-32700, -32600, -32602 for a lone surrogate), while the agent serves on.
  A line longer than :data:`MAX_LINE` is refused (-32600) and skipped up to
  its end.
- A response whose ``error`` is not an object, or whose id cannot be a key,
  crashed the receive loop: it becomes an error for the request waiting for
  it, or is dropped.
- ``$/cancel_request`` (schema 1.17) was "method not found", with a
  traceback on stderr. Here it cancels the request it names: a
  ``session/prompt``'s run is cancelled (the prompt answers ``cancelled``,
  as with ``session/cancel``); any other request is answered -32800 at once
  and the answer its handler gives later is dropped.
- A notification the agent does not serve, or whose params do not validate,
  left a traceback on stderr: it is dropped with one line in the log.
- At the end of the input the SDK closed the connection at once, dropping
  the answers of requests still in flight (``rhema-lsp acp < in.jsonl``
  lost them): the prompts in flight are cancelled and every request gets
  its answer first (within :data:`SETTLE_WAIT` seconds).
- The agent's own requests (a permission, a file read) that a cancelled
  prompt abandons stayed open on the client (a permission dialog nobody
  would read the answer of): :meth:`LineTransport.withdraw` sends
  ``$/cancel_request`` for each request of the session still unanswered.
- An update about a new session (its commands) could only be sent before
  ``session/new`` answered, when the client does not know the session yet:
  :meth:`LineTransport.after_answer` sends it right after the answer.
- Invalid params were answered "Invalid params" with pydantic's raw errors
  as data (the client's input echoed back, and exception objects that could
  not be serialised, which lost the answer): the message now names each
  field, and the data keeps each error's ``loc``, ``msg`` and ``type``.

Each of these is the SDK's (``NdjsonTransport``, ``Connection``, the
router), to be reported upstream; this module goes once they are fixed
there. The stdio streams it replaces (``acp.stdio.stdio_streams``) also
refuse a file as stdout ("Pipe transport is only for pipes").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp.meta import AGENT_METHODS
from acp.schema import CancelNotification, CancelRequestNotification
from pydantic import BaseModel, ValidationError

from rhema_lsp.acp.handshake import encode_line
from rhema_lsp.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    REQUEST_CANCELLED,
    MessageId,
    Notification,
    Refused,
    Request,
    Response,
    error_reply,
    loggable,
    read_message,
)

__all__ = ["MAX_LINE", "LineSplitter", "LineTransport"]

logger = logging.getLogger("rhema_lsp.acp")

MAX_LINE = 64 * 1024 * 1024
"""The longest line accepted, in bytes."""

CANCEL_REQUEST = "$/cancel_request"
PROMPT = AGENT_METHODS["session_prompt"]
NOTIFICATIONS: dict[str, type[BaseModel]] = {AGENT_METHODS["session_cancel"]: CancelNotification}
"""The notifications the agent serves, with their params' model."""

SETTLE_WAIT = 5.0
"""Seconds the requests in flight get to be answered once the input ended."""

START_TRIES = 10
"""Turns of the event loop a cancelled prompt gets to register its run."""


class LineSplitter:
    """Bytes in, lines out; a line over ``limit`` bytes comes out as ``None``
    (once), its bytes dropped up to its end."""

    def __init__(self, limit: int = MAX_LINE) -> None:
        self._buffer = bytearray()
        self._limit = limit
        self._skipping = False

    def feed(self, data: bytes) -> list[bytes | None]:
        """The lines ``data`` completes, in order (``None``: one too long)."""
        self._buffer += data
        lines: list[bytes | None] = []
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > self._limit:
                    if not self._skipping:
                        lines.append(None)
                    self._skipping = True
                    self._buffer.clear()
                return lines
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if self._skipping:
                self._skipping = False
            elif len(line) > self._limit:
                lines.append(None)
            else:
                lines.append(line)

    def close(self) -> bytes | None:
        """The last line, when the stream ended without a newline."""
        rest = None if self._skipping or not self._buffer else bytes(self._buffer)
        self._buffer.clear()
        return rest


def _problem(loc: Any, msg: str) -> str:
    """One validation error, as a message says it: `` `field.path` what is wrong``."""
    field = ".".join(str(part) for part in loc) if isinstance(loc, list | tuple) else str(loc)
    return f"`{field}` {msg.lower()}"


def _readable(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with the SDK's invalid-params error made readable and
    serialisable (see the module docstring)."""
    error = message.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    if not (
        isinstance(error, dict)
        and error.get("code") == INVALID_PARAMS
        and isinstance(data, dict)
        and isinstance(data.get("errors"), list)
    ):
        return message
    errors: list[dict[str, Any]] = []
    problems: list[str] = []
    for item in data["errors"]:
        if isinstance(item, dict):
            loc, msg = list(item.get("loc", ())), str(item.get("msg", ""))
            errors.append({"loc": loc, "msg": msg, "type": item.get("type")})
            problems.append(_problem(loc, msg))
    error = {
        "code": INVALID_PARAMS,
        "message": f"Invalid params: {'; '.join(problems)}",
        "data": {"errors": errors},
    }
    return {**message, "error": error}


class LineTransport:
    """The SDK's message transport over JSON lines (see the module docstring).

    Parameters
    ----------
    read
        The next bytes from the client (``b""`` at its end).
    write
        Writes bytes to the client whole.
    cancel_prompt
        Cancels the run of a session's prompt; whether there was one.
    """

    def __init__(
        self,
        read: Callable[[], Awaitable[bytes]],
        write: Callable[[bytes], Awaitable[None]],
        cancel_prompt: Callable[[str], bool],
    ) -> None:
        self._read = read
        self._write = write
        self._cancel_prompt = cancel_prompt
        self._lines = LineSplitter()
        self._ready: list[bytes | None] = []
        self._ended = False
        self._in_flight: dict[MessageId, str | None] = {}
        """The client's requests not answered yet: the session of a prompt, else None."""
        self._answered: set[MessageId] = set()
        """Requests answered -32800 already: their handler's answer is dropped."""
        self._asked: dict[MessageId, str | None] = {}
        """The agent's requests the client has not answered: their session."""
        self._idle = asyncio.Event()
        self._gone = False
        self._after: dict[str, list[dict[str, Any]]] = {}
        """Notifications to send once the answer naming a session is sent."""

    # -- receiving -------------------------------------------------------------------

    async def _line(self) -> bytes | bool | None:
        """The next line (``None``: one too long), or ``False`` at the end."""
        while not self._ready:
            if self._ended:
                return False
            data = await self._read()
            if data:
                self._ready += self._lines.feed(data)
            else:
                self._ended = True
                last = self._lines.close()
                if last is not None:
                    self._ready.append(last)
        return self._ready.pop(0)

    async def receive(self) -> dict[str, Any] | None:
        """The next message for the SDK; ``None`` when the client is gone."""
        while True:
            line = await self._line()
            if line is False:
                await self._settle()
                return None
            if line is None:
                await self._refuse(
                    Refused(
                        INVALID_REQUEST, f"Invalid request: a line longer than {MAX_LINE} bytes"
                    )
                )
                continue
            assert isinstance(line, bytes)
            if not line.strip():
                continue
            message = read_message(line, null_id=True)
            passed = await self._admit(message)
            if passed is not None:
                return passed

    async def _admit(self, message: Any) -> dict[str, Any] | None:
        """What of ``message`` goes on to the SDK (``None``: nothing)."""
        if isinstance(message, Refused):
            await self._refuse(message)
            return None
        if isinstance(message, Response):
            if message.id is not None:
                self._asked.pop(message.id, None)
            if message.error is None:
                return message.raw
            return {"jsonrpc": "2.0", "id": message.id, "error": message.error}
        if isinstance(message, Notification):
            return await self._notification(message)
        assert isinstance(message, Request)
        if message.id in self._in_flight:
            await self._refuse(
                Refused(
                    INVALID_REQUEST,
                    f"Invalid request: id {message.id!r} is taken by a request in flight",
                )
            )
            return None
        session = message.params.get("sessionId") if isinstance(message.params, dict) else None
        prompt = message.method == PROMPT and isinstance(session, str)
        self._in_flight[message.id] = session if prompt else None
        return message.raw

    async def _notification(self, message: Notification) -> dict[str, Any] | None:
        if message.method == CANCEL_REQUEST:
            await self._cancel(message.params)
            return None
        if message.method.startswith("_"):
            return message.raw  # an extension: the SDK passes it to the agent
        model = NOTIFICATIONS.get(message.method)
        if model is None:
            if not message.method.startswith("$/"):
                logger.info(
                    "dropped notification %s: the agent does not serve it", loggable(message.method)
                )
            return None
        try:
            model.model_validate(message.params)
        except ValidationError as exc:
            logger.info(
                "dropped notification %s: %s", loggable(message.method), _readable_errors(exc)
            )
            return None
        return message.raw

    async def _cancel(self, params: Any) -> None:
        """``$/cancel_request``: stop the request it names."""
        try:
            request_id = CancelRequestNotification.model_validate(params).request_id
        except ValidationError as exc:
            logger.info("dropped %s: %s", CANCEL_REQUEST, _readable_errors(exc))
            return
        if request_id not in self._in_flight:
            logger.info("%s of %r: no such request in flight", CANCEL_REQUEST, request_id)
            return
        session = self._in_flight[request_id]
        if session is not None:
            for _ in range(START_TRIES):  # its task may not have started its run yet
                if self._cancel_prompt(session):
                    return
                await asyncio.sleep(0)
            return  # it ended before it ran: its answer is on its way
        self._answered.add(request_id)
        await self.send(error_reply(request_id, REQUEST_CANCELLED, "Request cancelled"))

    async def _refuse(self, refusal: Refused) -> None:
        if refusal.answer:
            logger.info("answered %s: %s", refusal.code, loggable(refusal.message))
            await self._send_line(refusal.reply())
        else:
            logger.info("dropped a message: %s", loggable(refusal.message))

    # -- sending ---------------------------------------------------------------------

    async def _settle(self) -> None:
        """The client's input ended: answer the requests already received
        (their prompts cancelled, the rest given :data:`SETTLE_WAIT` seconds)
        before the SDK's connection closes, which would drop them."""
        for session in {s for s in self._in_flight.values() if s is not None}:
            self._cancel_prompt(session)
        if self._in_flight:
            self._idle.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), SETTLE_WAIT)

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message; the answer to a request already answered
        (cancelled) is dropped, and so is any answer once the client is
        gone (other messages raise :class:`ConnectionError` then)."""
        if "method" in message or "id" not in message:
            if "method" in message and "id" in message:
                params = message.get("params")
                session = params.get("sessionId") if isinstance(params, dict) else None
                self._asked[message["id"]] = session if isinstance(session, str) else None
            await self._send_line(message)
            return
        msg_id = message["id"]
        if msg_id in self._answered and message.get("error", {}).get("code") != REQUEST_CANCELLED:
            self._answered.discard(msg_id)
            return
        result = message.get("result")
        session = result.get("sessionId") if isinstance(result, dict) else None
        after = self._after.pop(session, []) if isinstance(session, str) else []
        try:
            if not self._gone:
                await self._send_line(_readable(message))
                for notice in after:
                    await self._send_line(notice)
        except ConnectionError:
            pass  # nobody to answer: the request is done all the same
        finally:
            self._in_flight.pop(msg_id, None)
            if not self._in_flight:
                self._idle.set()

    def after_answer(self, session: str, notice: dict[str, Any]) -> None:
        """Send ``notice`` right after the answer whose result names
        ``session`` (``session/new``'s: a client drops updates about a
        session it was not told of yet)."""
        self._after.setdefault(session, []).append(notice)

    async def withdraw(self, session: str) -> None:
        """``$/cancel_request`` for each of the agent's requests about
        ``session`` the client has not answered (its prompt ended without
        waiting for them); the client's late answers are ignored."""
        for request_id in [i for i, s in self._asked.items() if s == session]:
            del self._asked[request_id]
            notice = {
                "jsonrpc": "2.0",
                "method": CANCEL_REQUEST,
                "params": {"requestId": request_id},
            }
            try:
                await self._send_line(notice)
            except ConnectionError:
                return

    async def _send_line(self, message: dict[str, Any]) -> None:
        if self._gone:
            raise ConnectionError("the client is gone")
        try:
            await self._write(encode_line(message))
        except OSError as exc:
            self._gone = True
            logger.info("the client stopped reading (%s): nothing more is sent", exc)
            raise ConnectionError("the client is gone") from exc

    async def close(self) -> None:
        """Nothing to close: the byte functions' owner closes them."""


def _readable_errors(exc: ValidationError) -> str:
    return loggable("; ".join(_problem(item["loc"], item["msg"]) for item in exc.errors()))
