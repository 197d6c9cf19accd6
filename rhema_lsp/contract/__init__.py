"""The editor contract as types: every command's arguments and result, every
``rhema/event``, and the command table, in one place.

The server, the headless client and the generated client types all derive
from these models; ``python -m rhema_lsp.contract`` prints the JSON Schema
and regenerates what is made from it (see :mod:`rhema_lsp.contract.generate`).
This package imports nothing of the project but the engine's message types.
Its root is lazy (:mod:`rhema_lsp.lazy`): the server's start loads
:mod:`.client` and :mod:`.names` only, never the command models.
"""

from typing import TYPE_CHECKING

from rhema_lsp.lazy import lazy_root

if TYPE_CHECKING:
    from rhema_lsp.contract.arguments import *  # noqa: F403
    from rhema_lsp.contract.arguments import __all__ as _arguments
    from rhema_lsp.contract.base import Args, Wire, json_field_names
    from rhema_lsp.contract.client import (
        DeclaredCapabilities,
        InitializationOptions,
        declared_capabilities,
    )
    from rhema_lsp.contract.commands import *  # noqa: F403
    from rhema_lsp.contract.commands import __all__ as _commands
    from rhema_lsp.contract.events import *  # noqa: F403
    from rhema_lsp.contract.events import __all__ as _events
    from rhema_lsp.contract.language import *  # noqa: F403
    from rhema_lsp.contract.language import __all__ as _language
    from rhema_lsp.contract.results import *  # noqa: F403
    from rhema_lsp.contract.results import __all__ as _results
    from rhema_lsp.contract.status import *  # noqa: F403
    from rhema_lsp.contract.status import __all__ as _status
    from rhema_lsp.contract.worktrees import *  # noqa: F403
    from rhema_lsp.contract.worktrees import __all__ as _worktrees

    __all__: list[str] = [
        "Args",
        "DeclaredCapabilities",
        "InitializationOptions",
        "Wire",
        "declared_capabilities",
        "json_field_names",
        *_arguments,
        *_commands,
        *_events,
        *_language,
        *_results,
        *_status,
        *_worktrees,
    ]

lazy_root(__name__)
