"""What the client can show, decided once at ``initialize``.

The server adapts to the client instead of assuming a rhema plugin:

- ``events``: the client renders ``rhema/event`` (it says so with
  ``initializationOptions.clientCapabilities.events``; our VS Code and
  Neovim clients do). Every other client gets the transcript file, opened
  with ``window/showDocument`` where supported, and a closing
  ``window/showMessage``.
- ``edit_selection``: the client implements the client-side command
  ``rhema.editSelection`` (asks for an instruction, then sends
  ``rhema.edit``); others get ready-made server-side code actions.
- Turns detach (the command answers at once, the run goes on) unless the
  client can show progress or renders events: a plain client's request
  would otherwise block it for the whole turn (Emacs' jsonrpc gives up
  after 10 s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from rhema_lsp.contract import declared_capabilities

__all__ = ["ClientFeatures"]


@dataclass(frozen=True, slots=True)
class ClientFeatures:
    """The client's abilities that change what the server sends."""

    events: bool = False
    edit_selection: bool = False
    work_done_progress: bool = False
    show_document: bool = False

    @classmethod
    def negotiate(
        cls, capabilities: types.ClientCapabilities | None, init_options: Any
    ) -> ClientFeatures:
        """The features of a client from its ``initialize`` request."""
        declared = declared_capabilities(init_options)
        window = capabilities.window if capabilities is not None else None
        show_document = window.show_document if window is not None else None
        return cls(
            events=declared.events,
            edit_selection=declared.edit_selection,
            work_done_progress=bool(window is not None and window.work_done_progress),
            show_document=bool(show_document is not None and show_document.support),
        )

    def detaches(self, token: int | str | None) -> bool:
        """Whether a run started without an explicit ``detach`` detaches:
        when the client could show neither progress nor events."""
        return token is None and not self.work_done_progress and not self.events
