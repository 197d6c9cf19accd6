"""What an MCP server is, as the user configures it: the common ``mcpServers``
JSON shape, validated entry by entry.

A server is either **stdio** (``command``, ``args``, ``env``, ``cwd``) or
**Streamable HTTP** (``url``, ``headers``); ``type`` may say which
(``stdio``, ``http``, ``streamable-http``), ``sse`` is refused. Beyond the
common shape each entry may carry ``allow`` (tools called without asking;
``autoApprove`` and ``alwaysAllow`` are read as the same list; ``"*"``
allows every tool of the server), ``safe`` (tools whose committed calls may
be re-run on resume), ``disabled``, ``timeout`` (seconds per call) and
``startTimeout`` (seconds to start, instead of the ``mcpStartTimeout`` setting)
and, for an HTTP server, ``oauth`` (a pre-registered client, the
client-credentials grant, a client ID metadata document:
:mod:`rhema_lsp.mcp.oauth_entry`).

Secrets never sit in a setting: every HTTP header value must take its
secret from the server's environment (``"Bearer ${GITHUB_TOKEN}"``), and
``${NAME}`` (or ``${env:NAME}``) in ``env`` values expands the same way.
Expansion happens when the server starts, and the expanded values are never
logged. A server a **client passes** (an ACP editor's own MCP servers, with
``session/new``) is built with :meth:`McpServerConfig.given`: its values are
the editor's, final, so its header values may be literal (and the hub
expands nothing in them). This module is light to import (pydantic only):
the settings parse it before anything else loads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from rhema_lsp.mcp.errors import McpUnstartable
from rhema_lsp.mcp.oauth_entry import McpOAuth

__all__ = [
    "DEFAULT_CALL_TIMEOUT_S",
    "DEFAULT_START_TIMEOUT_S",
    "SIGN_IN_WAIT_S",
    "McpServerConfig",
    "Placeholders",
    "expand_env",
    "parse_servers",
    "references",
]

DEFAULT_CALL_TIMEOUT_S = 120.0
DEFAULT_START_TIMEOUT_S = 10.0
"""How long a server may take to answer ``initialize`` and list its tools
(the ``mcpStartTimeout`` setting's default)."""
_REFERENCE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")
_HTTP_TYPES = ("http", "streamable-http", "streamableHttp", "streamable_http")
SIGN_IN_WAIT_S = 300.0
"""How long an OAuth sign-in may take (the loopback listener waits that long)."""
Placeholders = Literal["expand", "refuse", "keep"]
"""What ``${NAME}`` in an ``env`` or header value does: ``expand`` from the
server's environment (the user's own configuration), ``refuse`` to start (a
workspace file, which may not read the environment), or ``keep`` as written
(the values a client passes are final)."""
_GIVEN = "given"
"""The validation context key of a server a client passes (values final)."""


def references(template: str) -> list[str]:
    """The environment variable names ``template`` refers to."""
    return _REFERENCE.findall(template)


def expand_env(template: str, environ: Mapping[str, str], *, what: str) -> str:
    """``template`` with every ``${NAME}`` replaced from ``environ``.

    Raises
    ------
    McpUnstartable
        A referenced variable is not set (the message names it, never a value).
    """

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise McpUnstartable(
                f"{what} needs ${{{name}}}, which is not set in the server's environment: "
                "set it where the editor (or rhema-lsp) starts"
            )
        return environ[name]

    return _REFERENCE.sub(value, template)


class McpServerConfig(BaseModel):
    """One entry of ``mcpServers`` (see the module docstring).

    Attributes
    ----------
    transport
        ``stdio`` or ``http``, from ``type`` or from whether ``command`` or
        ``url`` is given.
    """

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    type: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    allow: tuple[str, ...] = Field(
        default=(), validation_alias=AliasChoices("allow", "autoApprove", "alwaysAllow")
    )
    safe: tuple[str, ...] = ()
    disabled: bool = False
    timeout: float = Field(default=DEFAULT_CALL_TIMEOUT_S, gt=0, le=3600)
    start_timeout: float | None = Field(default=None, alias="startTimeout", ge=1, le=600)
    oauth: McpOAuth | None = None

    @classmethod
    def given(cls, entry: Mapping[str, object]) -> McpServerConfig:
        """A server as a client passes it (an ACP editor's ``mcpServers``):
        validated like a setting, except that header values may be literal,
        since the editor, not a settings file, holds them.

        Raises
        ------
        pydantic.ValidationError
            The entry is not a valid server.
        """
        return cls.model_validate(entry, context={_GIVEN: True})

    @model_validator(mode="after")
    def _one_transport(self, info: ValidationInfo) -> McpServerConfig:
        kind = (self.type or "").strip()
        if kind == "sse":
            raise ValueError(
                "the SSE transport is not supported: use the server's Streamable HTTP URL"
            )
        if kind and kind != "stdio" and kind not in _HTTP_TYPES:
            raise ValueError(f"unknown type {kind!r}: use stdio or http")
        if self.command and self.url:
            raise ValueError("give either `command` (stdio) or `url` (HTTP), not both")
        if not self.command and not self.url:
            raise ValueError("give `command` (a stdio server) or `url` (a Streamable HTTP server)")
        if kind == "stdio" and not self.command:
            raise ValueError("a stdio server needs `command`")
        if kind in _HTTP_TYPES and not self.url:
            raise ValueError("an HTTP server needs `url`")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError("`url` must start with http:// or https://")
        given = isinstance(info.context, Mapping) and info.context.get(_GIVEN) is True
        if self.oauth is not None and not self.url:
            raise ValueError("`oauth` is for an HTTP server (`url`)")
        for what, secret in self.oauth.secrets() if self.oauth else ():
            if not given and not references(secret):
                raise ValueError(
                    f'`oauth.{what}` must come from the environment ("${{MY_SECRET}}")'
                )
        for header, value in self.headers.items():
            if not given and not references(value):
                raise ValueError(
                    f"header {header!r} must take its value from the environment, "
                    'e.g. "Bearer ${MY_TOKEN}"; literal header values are not accepted'
                )
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``stdio`` or ``http``."""
        return "stdio" if self.command else "http"

    def allows(self, tool: str) -> bool:
        """Whether ``tool`` is called without asking."""
        return "*" in self.allow or tool in self.allow

    def is_safe(self, tool: str) -> bool:
        """Whether a committed call to ``tool`` may be re-run on resume."""
        return "*" in self.safe or tool in self.safe

    def untrusted(self) -> McpServerConfig:
        """This entry as a workspace file may define it: nothing allow-listed
        or marked safe (the connection also expands no ``${NAME}`` for it)."""
        return self.model_copy(update={"allow": (), "safe": ()})

    def describe(self) -> str:
        """What starts the server, for a confirmation (never env or header values)."""
        if self.command:
            return " ".join([self.command, *self.args])
        return str(self.url)


def parse_servers(raw: object) -> tuple[dict[str, McpServerConfig], list[tuple[str, str]]]:
    """Validate an ``mcpServers`` object entry by entry.

    Parameters
    ----------
    raw
        The JSON value of the setting.

    Returns
    -------
    tuple of dict and list
        The valid servers by name, and ``(field, message)`` for every entry
        that is not valid (``field`` is ``mcpServers.NAME``).
    """
    if not isinstance(raw, Mapping):
        return {}, [("mcpServers", "expected an object of servers by name")]
    servers: dict[str, McpServerConfig] = {}
    problems: list[tuple[str, str]] = []
    for name, entry in raw.items():
        where = f"mcpServers.{name}"
        if not isinstance(name, str) or not name.strip():
            problems.append(("mcpServers", "a server needs a non-empty name"))
            continue
        try:
            servers[name] = McpServerConfig.model_validate(entry)
        except ValidationError as exc:
            problems.append((where, _message(exc)))
    return servers, problems


def _message(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"])
        text = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"`{where}` {text}" if where else text)
    return "; ".join(parts)
