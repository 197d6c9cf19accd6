"""One received JSON-RPC body, checked: a message, or the error that answers it.

:func:`read_message` is the only way a body becomes a message. Its rules:

- Not UTF-8, not JSON (``NaN`` and 4,300-digit numbers included): -32700.
- JSON nested too deep to parse, or deeper than :data:`MAX_DEPTH` levels:
  -32600 (the message is refused before anything recurses over it).
- Not an object (an array, that is a batch, which LSP and ACP do not use; a
  number, a string, ``null``): -32600.
- ``jsonrpc`` other than ``"2.0"``, a ``method`` that is not a string, an
  ``id`` that is not an integer or a string (or ``null``, where the protocol
  allows it), ``params`` that are not an object or an array: -32600.
- A lone surrogate (``"\\ud800"``: valid JSON, not Unicode) in a request's
  params: -32602 naming where. In a notification or a response it becomes
  U+FFFD (one UTF-16 unit for one, so document offsets stay in step), since
  nothing can be answered there.

A refused request is answered with its own ``id`` when that id is valid,
else with ``null``, as JSON-RPC says; a refused notification is only
dropped (nothing answers a notification). A malformed response (no
``result`` nor ``error``, an ``error`` that is not ``{code, message}``)
becomes an error response, so whoever waits for it is told rather than left
waiting; one without a usable ``id`` is dropped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_DEPTH",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "Message",
    "MessageId",
    "Notification",
    "Refused",
    "Request",
    "Response",
    "error_reply",
    "loggable",
    "read_message",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

MAX_DEPTH = 64
"""The deepest nesting accepted, the message object itself being level 1
(LSP and ACP messages stay under 15)."""

MessageId = int | str | None

_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Request:
    """A request: it is answered, with a result or an error."""

    id: MessageId
    method: str
    params: Any
    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Notification:
    """A notification: never answered."""

    method: str
    params: Any
    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Response:
    """The answer to a request we sent: ``error`` is ``{code, message, data?}``
    or ``None``."""

    id: MessageId
    result: Any
    error: dict[str, Any] | None
    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Refused:
    """A body that is not a message we serve: the error that answers it
    (``answer``), or why it is dropped."""

    code: int
    message: str
    id: MessageId = None
    answer: bool = True

    def reply(self) -> dict[str, Any]:
        """The JSON-RPC error response."""
        return error_reply(self.id, self.code, self.message)


Message = Request | Notification | Response | Refused


def loggable(text: str) -> str:
    """``text`` as a log line may carry it: a lone surrogate (valid JSON once
    escaped, not Unicode) becomes its ``\\udXXX`` escape, so a record quoting
    what a peer sent can be encoded by every handler (the editor's log, a
    file, a test runner's report); other text is unchanged."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def error_reply(msg_id: MessageId, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _decode(body: bytes) -> Any:
    """The JSON value of ``body``, or the :class:`Refused` answering it."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refused(PARSE_ERROR, f"Parse error: the message is not UTF-8 (byte {exc.start})")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return Refused(
            INVALID_REQUEST, f"Invalid request: the message nests deeper than {MAX_DEPTH} levels"
        )
    except ValueError as exc:  # JSONDecodeError, NaN, a number too long to convert
        return Refused(PARSE_ERROR, f"Parse error: the message is not JSON: {exc}")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", str: "a string", int: "a number", float: "a number"}.get(
        type(value), "an array" if isinstance(value, list) else "an object"
    )


def _valid_id(value: Any, null_id: bool) -> bool:
    if value is None:
        return null_id
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _where(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _problem(
    value: Any, path: tuple[str | int, ...], level: int, strings: bool
) -> tuple[str, str] | None:
    """The first problem in ``value`` (at ``level``, below ``path``): its kind
    (``deep``, or ``surrogate`` when ``strings`` are searched) and where;
    iterative, whatever the depth."""
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(value, path, level)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            if strings and _SURROGATE.search(item):
                return "surrogate", _where(where)
        elif isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return "deep", _where(where)
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, inner in pairs:
                if strings and isinstance(key, str) and _SURROGATE.search(key):
                    return "surrogate", _where(where)
                stack.append((inner, (*where, key), depth + 1))
    return None


def _clean(value: Any) -> Any:
    """``value`` with every lone surrogate replaced by U+FFFD (depth is
    already bounded when this runs)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {_clean(key): _clean(item) for key, item in value.items()}
    return value


def _inspect(body: bytes, data: dict[str, Any], members: tuple[str, ...]) -> tuple[str, str] | None:
    """The first problem in ``data``'s ``members``, when the body could hold one."""
    deep = body.count(b"{") + body.count(b"[") > MAX_DEPTH
    strings = _ESCAPED_SURROGATE.search(body) is not None
    if not deep and not strings:
        return None
    for member in members:
        if member in data:
            found = _problem(data[member], (member,), 2, strings)
            if found is not None:
                return found
    return None


def _call(body: bytes, data: dict[str, Any], reply_id: MessageId, has_id: bool) -> Message:
    method = data["method"]
    if not isinstance(method, str):
        return Refused(
            INVALID_REQUEST, f"Invalid request: `method` is {_kind(method)}, not a string", reply_id
        )
    params = data.get("params")
    if params is not None and not isinstance(params, dict | list):
        return Refused(
            INVALID_REQUEST,
            f"Invalid request: `params` of {method} is {_kind(params)}, not an object or an array",
            reply_id,
        )
    problem = _inspect(body, data, ("params",))
    if problem is not None:
        kind, where = problem
        if kind == "deep":
            return Refused(
                INVALID_REQUEST,
                f"Invalid request: {method} nests deeper than {MAX_DEPTH} levels (at `{where}`)",
                reply_id,
                answer=has_id,
            )
        if has_id:
            return Refused(
                INVALID_PARAMS,
                f"Invalid params: `{where}` of {method} holds a lone surrogate "
                "(a \\ud800-\\udfff escape that is not half of a pair): text must be Unicode",
                reply_id,
            )
        data = _clean(data)
        params = data.get("params")
    if has_id:
        return Request(reply_id, method, params, data)
    return Notification(method, params, data)


def _malformed(msg_id: MessageId, data: dict[str, Any], why: str) -> Response:
    error = {"code": INTERNAL_ERROR, "message": f"the peer's response is malformed: {why}"}
    return Response(msg_id, None, error, data)


def _response(body: bytes, data: dict[str, Any], msg_id: MessageId) -> Message:
    if data.get("jsonrpc") != "2.0":
        return _malformed(msg_id, data, '`jsonrpc` is not "2.0"')
    problem = _inspect(body, data, ("result", "error"))
    if problem is not None:
        if problem[0] == "deep":
            return _malformed(msg_id, data, f"it nests deeper than {MAX_DEPTH} levels")
        data = _clean(data)
    if "error" in data:
        error = data["error"]
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if not isinstance(code, int) or isinstance(code, bool) or not isinstance(message, str):
            return _malformed(msg_id, data, "`error` is not {code: integer, message: string}")
        kept = {"code": code, "message": message}
        if "data" in error:
            kept["data"] = error["data"]
        return Response(msg_id, None, kept, data)
    if "result" not in data:
        return _malformed(msg_id, data, "it has neither `result` nor `error`")
    return Response(msg_id, data["result"], None, data)


def read_message(body: bytes, *, null_id: bool = False) -> Message:
    """Check one received body (see the module docstring).

    Parameters
    ----------
    body
        The bytes of one frame (LSP) or one line (ACP).
    null_id
        Whether ``"id": null`` is an id (ACP's ``RequestId`` allows it; LSP's
        does not).
    """
    data = _decode(body)
    if isinstance(data, Refused):
        return data
    if isinstance(data, list):
        what = "an empty batch" if not data else "a batch (an array of messages)"
        return Refused(
            INVALID_REQUEST,
            f"Invalid request: {what} is not supported: send one JSON object per message",
        )
    if not isinstance(data, dict):
        return Refused(
            INVALID_REQUEST, f"Invalid request: a message is a JSON object, not {_kind(data)}"
        )
    has_id = "id" in data
    msg_id = data.get("id")
    id_ok = has_id and _valid_id(msg_id, null_id)
    reply_id = msg_id if id_ok else None
    if "method" not in data:
        if not has_id:
            return Refused(
                INVALID_REQUEST,
                "Invalid request: a message has a `method` (a request or a notification) "
                "or an `id` (a response)",
            )
        if not id_ok:
            return Refused(
                INVALID_REQUEST, f"a response with {_kind(msg_id)} as its id", answer=False
            )
        return _response(body, data, reply_id)
    if has_id and not id_ok:
        allowed = "an integer, a string or null" if null_id else "an integer or a string"
        return Refused(INVALID_REQUEST, f"Invalid request: `id` is {_kind(msg_id)}, not {allowed}")
    if data.get("jsonrpc") != "2.0":
        return Refused(INVALID_REQUEST, 'Invalid request: `jsonrpc` must be "2.0"', reply_id)
    return _call(body, data, reply_id, has_id)
