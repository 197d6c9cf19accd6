"""What every front door shares about running a turn: the settings, the
system prompt, the run registry with its cancellation, and the run pipeline
(:mod:`~rhema_lsp.runs.turn`: lease, resume, commits, the context budget,
MCP tools, checkpoints in the store, cancellation, the recorded turn) around
the engine's turn loop (:mod:`~rhema_lsp.runs.driver`).

The LSP server (:mod:`rhema_lsp.server`) and the ACP agent
(:mod:`rhema_lsp.acp`) both call the pipeline, so a turn is written once. It
imports the engine, the tools, the MCP hub, the session store and the
contract's vocabulary; nothing of a transport (no pygls, no ACP SDK) and not
the providers (a resolved provider comes in as
:class:`~rhema_lsp.runs.workplace.Backend`). Its modules are imported one by
one (``rhema_lsp.runs.settings`` stays light to import for the server's start).
"""
