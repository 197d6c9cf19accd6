"""JSON-RPC 2.0 as both front doors receive it: the check every incoming
message crosses before a protocol library sees it.

The language server (:mod:`rhema_lsp.server`, LSP's ``Content-Length``
frames) and the ACP agent (:mod:`rhema_lsp.acp`, one JSON object per line)
hand each received body to :func:`read_message`, which either returns a
well-formed :class:`Request`, :class:`Notification` or :class:`Response`, or
a :class:`Refused` saying which JSON-RPC error answers it. The rules are
written once, here, so the two doors cannot drift apart; what each protocol
adds (LSP's lifecycle, ACP's ``$/cancel_request``) lives in its door.
:mod:`~rhema_lsp.jsonrpc.stdio` moves bytes on stdin and stdout without
blocking the event loop, whatever they are connected to;
:mod:`~rhema_lsp.jsonrpc.child` is the other end: a ``Content-Length``
JSON-RPC connection to a child process (the headless client's server, the
agent's own language servers).

This package imports nothing of the project and no protocol library.
"""

from rhema_lsp.jsonrpc.messages import *  # noqa: F403
from rhema_lsp.jsonrpc.messages import __all__ as __all__
