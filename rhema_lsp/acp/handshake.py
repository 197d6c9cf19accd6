"""``rhema-lsp acp``'s first answer, sent before the ACP SDK loads.

Loading the SDK (its schema: a thousand pydantic models) and the agent
machinery takes a second or more, and a client waits for the ``initialize``
answer before it sends anything else (CodeCompanion started a second agent
when it waited too long). So the door reads the first lines itself
(:func:`~rhema_lsp.acp.ready.answer_early`) and, when the ``initialize``
is one this module can vouch for, answers it at once with
:func:`initialize_result`, then loads the rest; every line it does not
answer goes to the SDK unchanged (:func:`replaying`).

The rules it keeps:

- The answer is the SDK path's, byte for byte: :func:`initialize_result` is
  what :meth:`RhemaAcpAgent.initialize
  <rhema_lsp.acp.agent.RhemaAcpAgent.initialize>` returns (it builds its
  answer from it), serialised as the SDK serialises it, on the line
  encoding of :class:`~rhema_lsp.acp.transport.LineTransport`
  (:func:`encode_line`); ``tests/unit/acp/test_handshake.py`` compares the
  two paths' bytes.
- It vouches only for params the SDK accepts as they are (:func:`vouched`):
  an integer ``protocolVersion`` in range, and ``clientCapabilities`` (``fs``,
  ``terminal``, ``auth``), ``clientInfo`` and ``_meta`` made only of the
  fields and types it knows.
  Anything else (a date string for a version, an unstable capability, a
  field named in snake case, ...) is the SDK's to answer, errors included.
- Nothing is lost: the agent still gets the request
  (:class:`Greeting`, replayed through the SDK's own params model by
  :func:`rhema_lsp.acp.main.connect`), so it knows the client's
  capabilities; bytes read past the first line are replayed first.

It imports nothing of the SDK and nothing heavy (JSON).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rhema_lsp import __version__
from rhema_lsp.providers.known import offers_images

__all__ = [
    "LOCAL_METHOD",
    "PROTOCOL_VERSION",
    "SETUP_METHOD",
    "Greeting",
    "auth_methods",
    "encode_line",
    "images_offered",
    "initialize_result",
    "replaying",
    "terminal_auth",
    "vouched",
]

PROTOCOL_VERSION = 1
"""The ACP version this agent speaks (the SDK's ``acp.PROTOCOL_VERSION``; a
test checks they agree)."""

SETUP_METHOD = "rhema-setup"
"""The Terminal Auth method: the client runs the agent's command with
:data:`SETUP_FLAG` (:mod:`rhema_lsp.cli.setup`)."""

SETUP_FLAG = "--setup"

LOCAL_METHOD = "local-server"
"""The Agent Auth method: a model server on this machine
(:func:`rhema_lsp.acp.auth.sign_in_locally`)."""

FIRST_LINE_LIMIT = 64 * 1024
"""A first line longer than this is not an ``initialize`` to vouch for."""

_MAX_VERSION = 65535

Read = Callable[[], Awaitable[bytes]]


@dataclass(frozen=True, slots=True)
class Greeting:
    """An ``initialize`` answered here, for the agent once it is loaded.

    Attributes
    ----------
    params
        The request's params, as the client sent them.
    result
        The result sent.
    """

    params: dict[str, Any]
    result: dict[str, Any]


def images_offered(settings: Mapping[str, Any]) -> bool:
    """Whether the agent takes images in a prompt, from the settings as the
    command line gives them (camelCase; a value of the wrong type counts as
    unset, as the settings leave it at its default): the configured model is
    not known to read none (:func:`~rhema_lsp.providers.known.offers_images`)."""

    def text(key: str) -> str | None:
        value = settings.get(key)
        return value if isinstance(value, str) else None

    vision = settings.get("vision")
    return offers_images(
        text("provider"),
        text("model"),
        text("baseUrl"),
        text("protocol"),
        vision if isinstance(vision, bool) else None,
    )


def terminal_auth(params: Mapping[str, Any]) -> bool:
    """Whether the client of these ``initialize`` params runs Terminal Auth
    (``clientCapabilities.auth.terminal``)."""
    capabilities = params.get("clientCapabilities")
    auth = capabilities.get("auth") if isinstance(capabilities, dict) else None
    return isinstance(auth, dict) and auth.get("terminal") is True


def auth_methods(terminal: bool) -> list[dict[str, Any]]:
    """The ``authMethods``: choosing the model provider (``rhema-lsp acp
    --setup`` in a terminal, offered only to a client that runs ``terminal``
    methods), and using a model server on this machine (the agent's own)."""
    methods: list[dict[str, Any]] = []
    if terminal:
        methods.append(
            {
                "id": SETUP_METHOD,
                "name": "Choose a model provider",
                "description": "A local model server, a hosted provider and its key, or an "
                "endpoint of your own, kept in your user config (never in the workspace)",
                "args": [SETUP_FLAG],
                "type": "terminal",
            }
        )
    methods.append(
        {
            "id": LOCAL_METHOD,
            "name": "Use a model server on this machine",
            "description": "Ollama, LM Studio, llama.cpp or vLLM on its default port",
        }
    )
    return methods


def initialize_result(images: bool = True, terminal: bool = False) -> dict[str, Any]:
    """The ``initialize`` result: the version this agent speaks (whatever the
    client asked, as the protocol says: the client's own when it is that
    one, else the agent's latest), and what this agent does (JSON, in the
    SDK's field order); ``images``: whether a prompt may hold images
    (:func:`images_offered`); ``terminal``: whether the client runs
    Terminal Auth (:func:`terminal_auth`)."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": images, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
            "sessionCapabilities": {
                "list": {},
                "delete": {},
                "additionalDirectories": {},
                "fork": {},
                "resume": {},
                "close": {},
            },
        },
        "authMethods": auth_methods(terminal),
        "agentInfo": {"name": "rhema-lsp", "title": "Rhema", "version": __version__},
    }


def encode_line(message: Mapping[str, Any]) -> bytes:
    """One message as the line the agent sends."""
    return (json.dumps(message, separators=(",", ":"), default=str) + "\n").encode("utf-8")


def _fields(value: Any, kinds: Mapping[str, Callable[[Any], bool]]) -> bool:
    """``value`` is an object of only these fields, each of its kind."""
    return isinstance(value, dict) and all(
        key in kinds and kinds[key](item) for key, item in value.items()
    )


def _optional(kind: type) -> Callable[[Any], bool]:
    return lambda value: value is None or type(value) is kind


_META = _optional(dict)
_FS = {"readTextFile": _optional(bool), "writeTextFile": _optional(bool), "_meta": _META}
_AUTH = {"terminal": _optional(bool), "_meta": _META}
_CAPABILITIES = {
    "fs": lambda value: value is None or _fields(value, _FS),
    "terminal": _optional(bool),
    # the Python SDK's client sends {"terminal": false} (AuthCapabilities)
    "auth": lambda value: value is None or _fields(value, _AUTH),
    "_meta": _META,
}
_CLIENT_INFO = {
    "name": lambda value: type(value) is str,
    "version": lambda value: type(value) is str,
    "title": _optional(str),
    "_meta": _META,
}
_PARAMS = {
    "protocolVersion": lambda value: type(value) is int and 0 <= value <= _MAX_VERSION,
    "clientCapabilities": lambda value: value is None or _fields(value, _CAPABILITIES),
    "clientInfo": lambda value: value is None or _fields(value, _CLIENT_INFO),
    # the SDK passes _meta's keys to the agent as arguments: only an empty one here
    "_meta": lambda value: value is None or value == {},
}


def vouched(params: Any) -> bool:
    """Whether the SDK accepts ``initialize`` ``params`` as they are (see
    the module docstring): then :func:`initialize_result` is its answer."""
    return (
        _fields(params, _PARAMS)
        and "protocolVersion" in params
        and (params.get("clientInfo") is None or {"name", "version"} <= params["clientInfo"].keys())
    )


def replaying(first: bytes, read: Read) -> Read:
    """``read``, after handing out ``first`` (when there is any)."""
    pending = [first] if first else []

    async def replayed() -> bytes:
        if pending:
            return pending.pop()
        return await read()

    return replayed
