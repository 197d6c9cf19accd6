"""read_message: every body is a well-formed message or the right JSON-RPC
error, decided by the rules of its docstring; checked case by case, then
over generated bodies against an oracle written from the JSON-RPC spec."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rhema_lsp.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_DEPTH,
    PARSE_ERROR,
    Notification,
    Refused,
    Request,
    Response,
    read_message,
)


def body(value: Any) -> bytes:
    return json.dumps(value).encode()


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("raw", "code", "words"),
    [
        (b"\xff\xfe{}", PARSE_ERROR, "not UTF-8"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "x"', PARSE_ERROR, "not JSON"),
        (b"", PARSE_ERROR, "not JSON"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": [NaN]}', PARSE_ERROR, "NaN"),
        (b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "x"}', PARSE_ERROR, "JSON"),
        (nested(100_000).encode(), INVALID_REQUEST, "nests deeper"),
        (b"[]", INVALID_REQUEST, "empty batch"),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "x"}]', INVALID_REQUEST, "batch"),
        (b"42", INVALID_REQUEST, "not a number"),
        (b"null", INVALID_REQUEST, "not null"),
        (b'"hello"', INVALID_REQUEST, "not a string"),
        (b"{}", INVALID_REQUEST, "has a `method`"),
        (
            b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "x"}',
            INVALID_REQUEST,
            "`id` is an object",
        ),
        (b'{"jsonrpc": "2.0", "id": [1], "method": "x"}', INVALID_REQUEST, "`id` is an array"),
        (b'{"jsonrpc": "2.0", "id": true, "method": "x"}', INVALID_REQUEST, "a boolean"),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "x"}', INVALID_REQUEST, "`id` is a number"),
        (b'{"jsonrpc": "2.0", "id": null, "method": "x"}', INVALID_REQUEST, "`id` is null"),
        (b'{"id": 1, "method": "x"}', INVALID_REQUEST, '"2.0"'),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "x"}', INVALID_REQUEST, '"2.0"'),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', INVALID_REQUEST, "`method` is a number"),
        (b'{"jsonrpc": "2.0", "method": ["x"]}', INVALID_REQUEST, "`method` is an array"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": 3}', INVALID_REQUEST, "`params`"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": "a"}', INVALID_REQUEST, "`params`"),
    ],
)
def test_a_body_that_is_not_a_message_is_refused_with_the_right_code(
    raw: bytes, code: int, words: str
) -> None:
    refused = read_message(raw)

    assert isinstance(refused, Refused)
    assert refused.code == code
    assert words in refused.message
    assert refused.answer
    reply = refused.reply()
    assert reply["jsonrpc"] == "2.0"
    assert reply["error"] == {"code": code, "message": refused.message}


def test_a_refused_request_is_answered_with_its_id_when_the_id_is_valid() -> None:
    assert read_message(b'{"jsonrpc": "1.0", "id": 7, "method": "x"}').id == 7  # type: ignore[union-attr]
    assert read_message(b'{"jsonrpc": "2.0", "id": "a", "method": 1}').id == "a"  # type: ignore[union-attr]
    assert read_message(b'{"jsonrpc": "2.0", "id": {}, "method": "x"}').id is None  # type: ignore[union-attr]


def test_null_ids_are_ids_where_the_protocol_says_so() -> None:
    message = read_message(b'{"jsonrpc": "2.0", "id": null, "method": "x"}', null_id=True)

    assert message == Request(None, "x", None, {"jsonrpc": "2.0", "id": None, "method": "x"})


def test_requests_notifications_and_responses_come_out_whole() -> None:
    request = read_message(body({"jsonrpc": "2.0", "id": 3, "method": "m", "params": {"a": [1]}}))
    notification = read_message(body({"jsonrpc": "2.0", "method": "n", "params": [1, 2]}))
    result = read_message(body({"jsonrpc": "2.0", "id": "r", "result": None}))
    error = read_message(
        body({"jsonrpc": "2.0", "id": 4, "error": {"code": -1, "message": "no", "data": [1]}})
    )

    assert isinstance(request, Request) and (request.id, request.params) == (3, {"a": [1]})
    assert isinstance(notification, Notification) and notification.params == [1, 2]
    assert isinstance(result, Response) and result.error is None and result.id == "r"
    assert isinstance(error, Response)
    assert error.error == {"code": -1, "message": "no", "data": [1]}


@pytest.mark.parametrize(
    ("response", "words"),
    [
        ({"jsonrpc": "2.0", "id": 1}, "neither"),
        ({"jsonrpc": "2.0", "id": 1, "error": 5}, "`error` is not"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "`error` is not"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}, "`error` is not"),
        ({"id": 1, "result": 1}, '"2.0"'),
        ({"jsonrpc": "2.0", "id": 1, "result": json.loads(nested(MAX_DEPTH + 5))}, "deeper"),
    ],
)
def test_a_malformed_response_becomes_an_error_for_whoever_waits_for_it(
    response: dict[str, Any], words: str
) -> None:
    message = read_message(body(response))

    assert isinstance(message, Response)
    assert message.id == 1
    assert message.error is not None
    assert message.error["code"] == INTERNAL_ERROR
    assert words in message.error["message"]


def test_a_response_without_a_usable_id_is_dropped_unanswered() -> None:
    refused = read_message(b'{"jsonrpc": "2.0", "id": {"a": 1}, "result": 1}')

    assert isinstance(refused, Refused) and not refused.answer


def test_nesting_past_the_limit_is_refused_naming_where() -> None:
    deep = {"jsonrpc": "2.0", "id": 9, "method": "m", "params": {"a": json.loads(nested(80))}}
    at_limit = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "m",
        "params": json.loads(nested(MAX_DEPTH - 1)),
    }

    refused = read_message(body(deep))

    assert isinstance(refused, Refused)
    assert (refused.code, refused.id) == (INVALID_REQUEST, 9)
    assert "`params.a[0]" in refused.message
    assert isinstance(read_message(body(at_limit)), Request)
    dropped = read_message(body({"jsonrpc": "2.0", "method": "n", "params": deep["params"]}))
    assert isinstance(dropped, Refused) and not dropped.answer


def test_a_lone_surrogate_in_a_request_is_invalid_params_naming_the_field() -> None:
    raw = (
        b'{"jsonrpc": "2.0", "id": 2, "method": "m", "params": {"args": [{"session": "a\\ud800"}]}}'
    )

    refused = read_message(raw)

    assert isinstance(refused, Refused)
    assert (refused.code, refused.id) == (INVALID_PARAMS, 2)
    assert "`params.args[0].session`" in refused.message
    json.dumps(refused.reply()).encode("utf-8")  # the reply itself is sendable


def test_a_lone_surrogate_in_a_notification_or_response_becomes_a_replacement_character() -> None:
    notification = read_message(
        b'{"jsonrpc": "2.0", "method": "n", "params": {"text": "x\\udc00y", "k\\ud801": 1}}'
    )
    response = read_message(b'{"jsonrpc": "2.0", "id": 1, "result": ["\\ud83d"]}')
    pair = read_message(b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": ["\\ud83d\\ude00"]}')

    assert isinstance(notification, Notification)
    assert notification.params == {"text": "x\ufffdy", "k\ufffd": 1}
    assert isinstance(response, Response) and response.result == ["\ufffd"]
    assert isinstance(pair, Request) and pair.params == ["😀"]  # a valid pair is kept


# -- generated bodies against an oracle ------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
json_values = st.recursive(
    json_scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)
any_json = json_scalars | st.floats() | json_values


def broken(draw: st.DrawFn, data: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    """``data`` with at most one of ``fields`` dropped or replaced by any JSON value."""
    field = draw(st.sampled_from([*fields, None]))
    if field is not None:
        if draw(st.integers(0, 3)) == 0:
            data.pop(field, None)
        else:
            data[field] = draw(any_json)
    return data


@st.composite
def calls(draw: st.DrawFn) -> dict[str, Any]:
    """A well-formed request or notification with at most one member
    dropped or replaced by any JSON value."""
    data: dict[str, Any] = {"jsonrpc": "2.0", "method": draw(st.text(max_size=10))}
    if draw(st.booleans()):
        data["id"] = draw(st.integers() | st.text(max_size=6))
    if draw(st.booleans()):
        data["params"] = draw(
            st.lists(json_values, max_size=2)
            | st.dictionaries(st.text(max_size=4), json_values, max_size=2)
        )
    return broken(draw, data, ["params", "id", "method", "jsonrpc"])


@st.composite
def responses(draw: st.DrawFn) -> dict[str, Any]:
    """A response (a result or an error) with at most one member dropped
    or replaced by any JSON value."""
    data: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(st.integers() | st.text(max_size=6))}
    if draw(st.booleans()):
        data["result"] = draw(json_values)
    else:
        data["error"] = {"code": draw(st.integers()), "message": draw(st.text(max_size=5))}
    return broken(draw, data, ["id", "error", "result", "jsonrpc"])


def expected(data: Any) -> str:
    """What JSON-RPC 2.0 makes of ``data``, written from its spec (LSP ids)."""
    if not isinstance(data, dict):
        return "invalid"
    has_id = "id" in data
    valid_id = has_id and (isinstance(data["id"], str) or (type(data["id"]) is int))
    if "method" not in data:
        if not has_id:
            return "invalid"
        return "response" if valid_id else "dropped"
    if has_id and not valid_id:
        return "invalid"
    if data.get("jsonrpc") != "2.0" or not isinstance(data["method"], str):
        return "invalid"
    if data.get("params") is not None and not isinstance(data["params"], dict | list):
        return "invalid"
    return "request" if has_id else "notification"


@given(data=st.one_of(calls(), responses(), any_json))
def test_every_generated_body_is_what_the_spec_says_it_is(data: Any) -> None:
    message = read_message(body(data))

    try:
        json.dumps(data, allow_nan=False)
    except ValueError:  # NaN or Infinity: not JSON
        assert isinstance(message, Refused) and message.code == PARSE_ERROR
        return
    kind = expected(data)
    if kind == "invalid":
        assert isinstance(message, Refused) and message.answer
        assert message.code == INVALID_REQUEST
        valid_id = isinstance(data, dict) and (
            isinstance(data.get("id"), str) or type(data.get("id")) is int
        )
        assert message.id == (data["id"] if valid_id else None)
    elif kind == "dropped":
        assert isinstance(message, Refused) and not message.answer
    elif kind == "response":
        assert isinstance(message, Response) and message.id == data["id"]
    elif kind == "request":
        assert isinstance(message, Request)
        assert (message.id, message.method, message.params) == (
            data["id"],
            data["method"],
            data.get("params"),
        )
    else:
        assert isinstance(message, Notification) and message.method == data["method"]


@given(raw=st.binary(max_size=40))
def test_arbitrary_bytes_are_a_message_or_a_parse_error_never_an_exception(raw: bytes) -> None:
    message = read_message(raw)

    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        assert isinstance(message, Refused) and message.code == PARSE_ERROR
    else:
        assert not (isinstance(message, Refused) and message.code == PARSE_ERROR)
        assert isinstance(message, Refused) == (expected(data) in ("invalid", "dropped"))
