"""``python -m rhema_lsp``: the same as the ``rhema-lsp`` command."""

from rhema_lsp.cli import main

raise SystemExit(main())
