"""What the client can show, decided once at ``initialize``: the one place
the server's negotiation with an editor lives.

The server adapts to the client instead of assuming a rhema plugin. Three
rules, each a method or field here that every path asks:

- **Events** (:attr:`ClientFeatures.events`): ``rhema/event`` goes only to a
  client that declared ``initializationOptions.clientCapabilities.events``
  (our VS Code, Neovim and headless clients). Any other client would log an
  unknown notification (lsp-mode opens ``*Warnings*`` for each); it gets the
  session's transcript file instead, shown with ``window/showDocument`` at
  turn end where supported, and a closing ``window/showMessage``.
- **Detaching** (:meth:`ClientFeatures.detaches`): a turn started without an
  explicit ``detach`` detaches (the command answers at once, the run goes
  on) unless the client renders events. Advertising
  ``window.workDoneProgress`` does not mean a client waits: lsp-mode's
  ``workspace/executeCommand`` is synchronous and gives up after 10 s, as
  does Emacs' jsonrpc under eglot.
- **Progress** (:meth:`ClientFeatures.progress_token`): a run reports on the
  request's ``workDoneToken`` while the request is open; a detached run's
  request has been answered (the token is dead), so it reports on a token
  the server creates with ``window/workDoneProgress/create`` where the
  client advertises ``window.workDoneProgress``, and else on none. The
  create's answer is never waited on
  (:class:`~rhema_lsp.server.progress.RunProgress`): a client that drops it
  loses the progress, never the turn.

``lists_plan``: the closing ``showMessage`` of a plain client's turn lists
the plan's steps when the client has no other view of the turn (neither
``showDocument`` nor work-done progress: eglot 1.9).

``continues_sessions``: the client keeps no session id, so its ask without a
``session`` continues the folder's latest session
(:mod:`~rhema_lsp.server.conversation`) and it is offered "Rhema: new
conversation".

``question_actions``: the actions of a ``window/showMessageRequest``. A
client that renders no events gets an unnamed first action before the
server's choices ("Deny" first): eglot fills its prompt with the first
action's title, and a typed "Run" would read "DenyRun"; its prompt now starts
empty, and an empty answer, like the unnamed action (the only one vim-lsp
lets a user pick), is still "no".

``edit_selection``: the client implements the client-side command
``rhema.editSelection`` (asks for an instruction, then sends
``rhema.edit``); others get ready-made server-side code actions.

``language``: the client answers ``rhema/language`` from its editor's own
language servers; the language tools then ask it
(:meth:`~rhema_lsp.server.state.ServerState.language`).

``ask_text``: the client answers ``rhema/askText`` (an MCP form's free-text
field); others get the form's choices only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from rhema_lsp.contract import declared_capabilities

if TYPE_CHECKING:  # a type only: the registry (and the engine's events) load on the first run
    from rhema_lsp.runs.registry import ProgressToken

__all__ = ["UNNAMED", "ClientFeatures"]

UNNAMED = ""
"""The title of a plain client's first action: its prompt starts empty (eglot
fills it with the first title), and choosing it answers no."""


@dataclass(frozen=True, slots=True)
class ClientFeatures:
    """The client's abilities that change what the server sends."""

    events: bool = False
    edit_selection: bool = False
    language: bool = False
    ask_text: bool = False
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
            language=declared.language,
            ask_text=declared.ask_text,
            work_done_progress=bool(window is not None and window.work_done_progress),
            show_document=bool(show_document is not None and show_document.support),
        )

    @property
    def lists_plan(self) -> bool:
        """Whether the closing message lists the plan: the client shows
        neither the transcript nor progress."""
        return not self.show_document and not self.work_done_progress

    @property
    def continues_sessions(self) -> bool:
        """Whether an ask without ``session`` continues the folder's latest
        session: the client renders no events (it keeps no session id)."""
        return not self.events

    def question_actions(self, choices: Sequence[str]) -> list[str]:
        """The titles a question offers: ``choices``, after an unnamed one
        (which answers no) for a client that renders no events."""
        return list(choices) if self.events else [UNNAMED, *choices]

    def detaches(self, detach: bool | None) -> bool:
        """Whether a run detaches: as ``detach`` says, else unless the client
        renders events (only our own clients are known to wait for a turn)."""
        return detach if detach is not None else not self.events

    def progress_token(
        self, client_token: ProgressToken | None, *, detached: bool
    ) -> ProgressToken | None:
        """The request's token a run may report on: none once the request is
        answered (detached), so that a server-created one takes its place."""
        return None if detached else client_token
