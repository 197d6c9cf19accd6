"""What every front door shares about running a turn: the settings, the
system prompt, the run registry with its cancellation, and the
checkpointing drive around the engine's turn loop.

The LSP server (:mod:`rhema_lsp.server`) and the ACP agent
(:mod:`rhema_lsp.acp`) both build on it, so the loop is written once. It
imports the engine, the session store and the contract's vocabulary, nothing
of a transport: no pygls, no ACP SDK. Its modules are imported one by one
(``rhema_lsp.runs.settings`` stays light to import for the server's start).
"""
