"""The JSON-RPC request a command arrived in, as its handler sees it.

:class:`Request` is what the wire (:mod:`rhema_lsp.server.pygls_adapter`)
hands the router (:mod:`rhema_lsp.server.router`) with each command, and
every handler takes: the request's id (for ``$/cancelRequest``) and the
client's progress token. It holds data only and imports no other part of
the server, so both sides of the router may name it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rhema_lsp.runs.registry import MsgId, ProgressToken

__all__ = ["Request"]


@dataclass(frozen=True, slots=True)
class Request:
    """The JSON-RPC request a command arrived in: its id (for
    ``$/cancelRequest``) and the client's progress token."""

    msg_id: MsgId | None = None
    token: ProgressToken | None = None
