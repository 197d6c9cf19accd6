"""Which session an ask continues, for a client that renders no events.

A plain LSP client (eglot, lsp-mode, Vim, Helix, Neovim without our plugin:
one that declared no ``initializationOptions.clientCapabilities.events``,
:attr:`~rhema_lsp.server.clients.ClientFeatures.events`) sends
``rhema.turn {prompt}`` and throws away the answer that carries the session
id, so without this rule every ask started a session of its own: a follow-up
question was answered without the earlier one, and each turn opened another
transcript. The rule, asked by the ``rhema.turn`` and ``rhema.step``
handlers for an ask without a ``session``:

- a client that declared ``events`` (our plugins, headless ``ask``) keeps
  what it says: no ``session`` is a new session (ACP does not come here);
- else the ask continues the folder's latest session (the store's most
  recently updated one), so its history is the model's context and its
  transcript (one file per session) is the one shown and updated again;
- unless the user started a new conversation (the code action "Rhema: new
  conversation", ``rhema.newConversation``, which a plain client is told
  of): the folder's next ask starts a new session, and the asks after it
  continue that one;
- or that session is running a turn: the ask starts a new session and the
  user is told so (``window/showMessage``), never refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from lsprotocol import types

if TYPE_CHECKING:
    from rhema_lsp.runs.registry import RunRegistry
    from rhema_lsp.runs.settings import Settings
    from rhema_lsp.server.clients import ClientFeatures
    from rhema_lsp.server.folders import Folders

__all__ = ["NEW_CONVERSATION_SAID", "NEW_CONVERSATION_TITLE", "Continued", "Conversations"]

NEW_CONVERSATION_TITLE = "Rhema: new conversation"
"""The code action a plain client is offered to start over."""

NEW_CONVERSATION_SAID = "Rhema: your next question starts a new conversation"
"""What a plain client is told when it starts over (the folder's name follows)."""


class _Shows(Protocol):
    def window_show_message(self, params: types.ShowMessageParams) -> None: ...


class StateView(Protocol):
    """What the rule reads of the server's state
    (:class:`~rhema_lsp.server.state.ServerState`, which holds the rule)."""

    @property
    def client(self) -> ClientFeatures: ...
    @property
    def folders(self) -> Folders: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def runs(self) -> RunRegistry: ...
    @property
    def server(self) -> _Shows: ...


@dataclass(frozen=True, slots=True)
class Continued:
    """The session an ask goes to (``None``: a new one) and what the user is
    told about it (``""``: nothing)."""

    session: str | None
    note: str = ""


class Conversations:
    """The folders whose next plain ask starts a new session."""

    def __init__(self) -> None:
        self._fresh: set[Path] = set()

    def start_new(self, folder: Path, state: StateView) -> None:
        """The folder's next ask starts a new conversation; a plain client
        is told so (it has no other sign that the code action did anything)."""
        self._fresh.add(folder)
        if state.client.continues_sessions:
            _tell(state, f"{NEW_CONVERSATION_SAID} ({folder.name})")

    async def session_for(self, state: StateView, folder: Path) -> Continued:
        """The session an ask without ``session`` in ``folder`` continues
        (see the module docstring); a note is shown at once."""
        if not state.client.continues_sessions:
            return Continued(None)
        if folder in self._fresh:
            self._fresh.discard(folder)
            return Continued(None)
        found = await state.folders.state(folder, state.settings.session_store)
        for info in await found.store.list():
            if Path(info.folder) != folder:
                continue
            if info.running or state.runs.is_running(info.id):
                note = (
                    f"Rhema: the conversation “{info.title}” is still running a turn; "
                    "this question starts a new one."
                )
                _tell(state, note)
                return Continued(None, note)
            state.folders.remember(info.id, folder)
            return Continued(info.id)
        return Continued(None)


def _tell(state: StateView, message: str) -> None:
    state.server.window_show_message(
        types.ShowMessageParams(type=types.MessageType.Info, message=message)
    )
