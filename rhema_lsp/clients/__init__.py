"""The editor clients' generated tables: what the VS Code extension and the
Neovim plugin know of the tools, the commands and the settings, made from
the one home of each fact (:mod:`rhema_lsp.tools.facts`,
:mod:`rhema_lsp.contract.names`, :class:`rhema_lsp.runs.settings.Settings`
and the provider presets).

``python -m rhema_lsp.contract`` writes them with the contract's own files
(:func:`rhema_lsp.clients.tables.artefacts`) and ``--check`` fails when one
is not current. A layer above the contract, the providers, the tools and the
runs: nothing but that program imports it.
"""
