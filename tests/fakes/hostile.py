"""Hostile inputs for the fuzz suites, and what each one must get.

- :func:`command_args` draws a contract command's argument object from
  ``docs/contract.schema.json`` (the published contract, not the server's
  code): well-formed ones, with strings drawn from pools that name things
  the server knows (a stored session, the workspace folder, its file) or
  does not (an unknown session, a folder outside, a lone surrogate), and
  broken ones (a field dropped, retyped, or added).
- :func:`expected_refusal` is the oracle for a command's arguments: the
  contract's own argument model (``spec.args``) says whether they are valid;
  a lone surrogate is -32602 whatever the model says.
- :func:`lsp_frames` draws frames as real clients write them (header case,
  line ends, extra headers, in any order); :data:`BAD_FRAMES` are frames no
  one can delimit.
- :func:`envelopes` draws JSON-RPC messages with one member broken, and
  :func:`expected_error` says which error JSON-RPC gives them (LSP's rules
  on ids: an integer or a string; ACP also allows ``null``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from pydantic import ValidationError

from rhema_lsp.contract import command_named

__all__ = [
    "BAD_FRAMES",
    "Pools",
    "command_args",
    "envelopes",
    "examples",
    "expected_error",
    "expected_refusal",
    "has_lone_surrogate",
    "lsp_frames",
    "offenders",
]


def examples(count: int) -> int:
    """``count`` examples, ten times as many with ``HYPOTHESIS_PROFILE=explore``."""
    return count * (10 if os.environ.get("HYPOTHESIS_PROFILE") == "explore" else 1)


SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "contract.schema.json").read_text()
)

LONE = "\ud800"
"""A lone surrogate: valid JSON once escaped, not Unicode."""


class Pools:
    """Strings that name what the server has, or does not."""

    def __init__(self, workspace: Path, sessions: list[str]) -> None:
        self.workspace = workspace
        self.sessions = sessions
        self.inside = inside = (workspace / "hello.py").as_uri()
        outside = (workspace.parent / "elsewhere.txt").as_uri()
        self.by_field: dict[str, st.SearchStrategy[str]] = {
            "session": st.sampled_from([*sessions, "nosuchsession", "a" * 300, "x" + LONE]),
            "folder": st.sampled_from(
                [str(workspace), str(workspace.parent), "relative/dir", "/", "ws" + LONE]
            ),
            "uri": st.sampled_from(
                [inside, outside, "rhema-checkpoint:/nope", "untitled:1", "file:///" + LONE]
            ),
            "prompt": st.sampled_from(["Say hi", "  ", "explain " + LONE, "🙂 ok"]),
            "instruction": st.sampled_from(["make it iterative", "\t", "fix " + LONE]),
        }
        self.paths = st.lists(st.sampled_from([inside, outside, "not a uri"]), max_size=2)


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        resolved: dict[str, Any] = SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]]
        return resolved
    return schema


def _valid(schema: dict[str, Any], name: str, pools: Pools, depth: int) -> st.SearchStrategy[Any]:
    """Values ``schema`` allows (or nearly: pooled strings may break a pattern)."""
    schema = _resolve(schema)
    if "anyOf" in schema:
        return st.one_of([_valid(option, name, pools, depth) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        text = st.text(min_size=schema.get("minLength", 0), max_size=12)
        return pools.by_field.get(name, text)
    if kind == "integer":
        return st.integers(schema.get("minimum", -5), schema.get("maximum", 40))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        if name == "paths":
            return pools.paths
        items = _valid(schema["items"], name, pools, depth + 1)
        return st.lists(items, min_size=schema.get("minItems", 0), max_size=2 if depth < 2 else 0)
    if kind == "object":
        return _object(schema, pools, depth + 1)
    raise ValueError(f"the strategy does not know {schema}")


def _object(schema: dict[str, Any], pools: Pools, depth: int) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.fixed_dictionaries(
        {
            key: _valid(value, key, pools, depth)
            for key, value in properties.items()
            if key in required
        },
        optional={
            key: _valid(value, key, pools, depth)
            for key, value in properties.items()
            if key not in required
        },
    )


junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@st.composite
def command_args(draw: st.DrawFn, name: str, pools: Pools) -> Any:
    """An argument object for command ``name``: valid by the schema, then
    (half the time) broken in one place."""
    schema = SCHEMA["$defs"][SCHEMA["commands"][name]["args"]["$ref"].rsplit("/", 1)[1]]
    args: dict[str, Any] = draw(_object(schema, pools, 1))
    how = draw(st.sampled_from(["keep", "keep", "drop", "retype", "add", "not an object"]))
    fields = sorted(schema.get("properties", {}))
    if how == "drop" and args:
        args.pop(draw(st.sampled_from(sorted(args))))
    elif how == "retype" and fields:
        args[draw(st.sampled_from(fields))] = draw(junk)
    elif how == "add":
        args[draw(st.sampled_from(["unknown", "Prompt", "session_id", "max_steps"]))] = 1
    elif how == "not an object":
        return draw(junk)
    return args


def has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_lone_surrogate(item) for item in value)
    return False


def offenders(args: Any, pools: Pools) -> list[str]:
    """What in valid ``args`` names nothing the server has: a refusal must
    say one of these (``no session X``, `` `folder` ``, `` `uri` ``,
    `` `context` ``, an MCP `` `server` `` or `` `name` ``)."""
    if not isinstance(args, dict):
        return []
    found = []
    if args.get("folder") not in (None, str(pools.workspace)):
        found.append("`folder`")
    session = args.get("session")
    if session is not None and session not in pools.sessions:
        found.append(f"no session {session}")
    if args.get("uri") not in (None, pools.inside):
        found.append("`uri`")
    if any(ref.get("uri") != pools.inside for ref in args.get("context") or []):
        found.append("`context`")
    if args.get("server") is not None:  # MCP servers: the fuzzed server configures none
        found.append(f"the MCP server {args['server']} is not running")
    if args.get("name") is not None:
        found.append("`name`")
    return found


def expected_refusal(name: str, args: Any) -> str | None:
    """Why ``args`` must be refused with -32602 (``None``: they are valid, by
    the contract's argument model)."""
    if has_lone_surrogate(args):
        return "lone surrogate"
    spec = command_named(name)
    assert spec is not None
    if args is not None and not isinstance(args, dict):
        return "must be an object"
    try:
        spec.parse(args or {})  # null: no argument object, the defaults
    except ValidationError:
        return name
    return None


# -- frames -------------------------------------------------------------------------

_NAMES = st.sampled_from(["Content-Length", "content-length", "CONTENT-LENGTH", "Content-length"])
_ENDS = st.sampled_from([b"\r\n", b"\n"])
_EXTRA = st.lists(
    st.sampled_from([b"Content-Type: application/vscode-jsonrpc; charset=utf-8", b"X-Id: 7"]),
    max_size=2,
)


@st.composite
def lsp_frames(draw: st.DrawFn, body: bytes) -> bytes:
    """``body`` framed as some client writes it."""
    headers = [*draw(_EXTRA), draw(_NAMES).encode() + b": %d" % len(body)]
    lines = b"".join(line + draw(_ENDS) for line in draw(st.permutations(headers)))
    return lines + draw(_ENDS) + body


BAD_FRAMES = [
    b"Content-Length: -1\r\n\r\n",
    b"Content-Length: lots\r\n\r\n",
    b"Content-Length: 99999999999999\r\n\r\n",
    b"\r\n",
    b"Garbage\r\n\r\n",
    b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}',
    b"Content-Type: application/json\r\n\r\n{}",
]
"""Frames no one can delimit: the server must exit 1."""


# -- envelopes ------------------------------------------------------------------------

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=6,
)


@st.composite
def envelopes(draw: st.DrawFn, methods: list[str], msg_id: int) -> Any:
    """A request (id ``msg_id``) or notification for one of ``methods``, with
    at most one member broken; or a body that is no message at all."""
    shape = draw(
        st.sampled_from(["request", "notification", "broken", "surrogate", "value", "batch"])
    )
    if shape == "value":
        return draw(_values)
    data: dict[str, Any] = {"jsonrpc": "2.0", "method": draw(st.sampled_from(methods))}
    if shape != "notification":
        data["id"] = msg_id
    data["params"] = draw(st.none() | st.dictionaries(st.text(max_size=4), _values, max_size=2))
    if shape == "surrogate":
        data["params"] = {"text": "a" + LONE}
        if draw(st.booleans()):
            data.pop("id")
    if shape == "broken":
        field = draw(st.sampled_from(["jsonrpc", "id", "method", "params"]))
        data[field] = draw(
            (_values | st.floats(allow_nan=False, allow_infinity=False) | st.just(LONE)).filter(
                lambda value: value not in ("exit", "shutdown")  # they would end the server
            )
        )
    if shape == "batch":
        return [data]
    return data


def expected_error(data: Any, *, null_id: bool = False) -> tuple[int, Any] | None:
    """The error JSON-RPC answers ``data`` with, and the id it carries; or
    ``None`` when the envelope is fine (the method decides the rest)."""
    try:
        json.dumps(data, allow_nan=False)
    except ValueError:  # NaN or Infinity: not JSON
        return -32700, None
    if not isinstance(data, dict):
        return -32600, None
    has_id = "id" in data
    msg_id = data.get("id")
    valid_id = isinstance(msg_id, str) or type(msg_id) is int or (null_id and msg_id is None)
    if "method" not in data:
        return -32600, None
    if has_id and not valid_id:
        return -32600, None
    answer_id = msg_id if has_id else None
    if data.get("jsonrpc") != "2.0" or not isinstance(data["method"], str):
        return -32600, answer_id
    params = data.get("params")
    if params is not None and not isinstance(params, dict | list):
        return -32600, answer_id
    if has_id and has_lone_surrogate(params):
        return -32602, answer_id
    return None
