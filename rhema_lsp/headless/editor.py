"""The headless client's side of the contract: it is the editor.

It answers ``workspace/applyEdit`` by applying the edit to files on disk
atomically (through the tools' :class:`~rhema_lsp.tools.DiskEditor`, which
stays inside the workspace folder) and shows the diff; it prints the pages of
``window/showDocument`` (an MCP server's sign-in); it asks the user on
the terminal for ``window/showMessageRequest`` confirmations (or approves
them with ``--yes``, or declines when there is no terminal to ask), but a
question about trusting the workspace's own files (its ``.mcp.json``
programs) only ``--trust-project`` approves: ``--yes`` answers it ``Not
now``, so a CI job on an untrusted pull request runs none of them; it serves
the ``rhema`` settings on ``workspace/configuration``.

The terminal is read in a daemon thread: a Ctrl-C while a question waits
must not leave the process waiting for a line nobody will type.
"""

from __future__ import annotations

import asyncio
import difflib
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import converters, types

from rhema_lsp.tools import DiskEditor
from rhema_lsp.tools.positions import uri_to_path
from rhema_lsp.vocabulary import TRUST_CHOICES

__all__ = ["CLIENT_CAPABILITIES", "HeadlessEditor"]

CLIENT_CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-8"]},
    "workspace": {
        "applyEdit": True,
        "configuration": True,
        "workspaceFolders": True,
        "workspaceEdit": {
            "documentChanges": True,
            "resourceOperations": ["create", "rename", "delete"],
            "failureHandling": "abort",
        },
    },
    "window": {
        "showMessage": {"messageActionItem": {"additionalPropertiesSupport": False}},
        "showDocument": {"support": True},
    },
}

_DENY_WORDS = ("deny", "no", "cancel", "skip")


def _touched(edit: types.WorkspaceEdit) -> list[str]:
    uris: list[str] = []
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            uris.append(change.text_document.uri)
        elif isinstance(change, types.RenameFile):
            uris += [change.old_uri, change.new_uri]
        else:
            uris.append(change.uri)
    uris += list(edit.changes or {})
    return list(dict.fromkeys(uris))


def _read(uri: str) -> str | None:
    try:
        return uri_to_path(uri).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _read_all(uris: list[str]) -> list[str | None]:
    return [_read(uri) for uri in uris]


class HeadlessEditor:
    """Serves the server's requests to the editor, on disk and the terminal.

    Parameters
    ----------
    approve_all
        ``--yes``: approve every question about an action (a command, a
        protected write or read), never one about trust.
    trust_project
        ``--trust-project``: answer a question about trusting the
        workspace's own files (:data:`~rhema_lsp.vocabulary.TRUST_CHOICES`)
        ``Use them this time``; without it such a question is asked on the
        terminal, or, with ``--yes`` or no terminal, answered ``Not now``.
    """

    def __init__(
        self,
        folder: Path,
        settings: dict[str, Any],
        note: Callable[[str], None],
        *,
        approve_all: bool,
        interactive: bool,
        color: bool,
        trust_project: bool = False,
    ) -> None:
        self.folder = folder
        self.settings = settings
        self._note = note
        self._approve_all = approve_all
        self._trust_project = trust_project
        self._interactive = interactive
        self._color = color
        self._disk = DiskEditor([folder], position_encoding="utf-8")
        self._converter = converters.get_converter()
        self.applied: list[str] = []

    def configuration(self, params: Any) -> list[Any]:
        items = (params or {}).get("items", [])
        return [self.settings if item.get("section") == "rhema" else None for item in items]

    async def apply_edit(self, params: Any) -> dict[str, Any]:
        request = self._converter.structure(params, types.ApplyWorkspaceEditParams)
        uris = _touched(request.edit)
        before = await asyncio.to_thread(_read_all, uris)
        outcome = await self._disk.apply_edit(request.edit, request.label or "rhema", {})
        if not outcome.applied:
            self._note(f"edit not applied: {outcome.reason}")
            return {"applied": False, "failureReason": outcome.reason}
        after = await asyncio.to_thread(_read_all, uris)
        for uri, old, new in zip(uris, before, after, strict=True):
            self._show_diff(uri, old, new)
        self.applied += uris
        return {"applied": True}

    def _show_diff(self, uri: str, old: str | None, new: str | None) -> None:
        path = uri_to_path(uri)
        try:
            name = str(path.relative_to(self.folder))
        except ValueError:
            name = str(path)
        lines = difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=f"a/{name}" if old is not None else "/dev/null",
            tofile=f"b/{name}" if new is not None else "/dev/null",
        )
        for line in lines:
            text = line.rstrip("\n")
            if self._color and text.startswith("+") and not text.startswith("+++"):
                text = f"\x1b[32m{text}\x1b[0m"
            elif self._color and text.startswith("-") and not text.startswith("---"):
                text = f"\x1b[31m{text}\x1b[0m"
            self._note(text)

    async def show_message_request(self, params: Any) -> dict[str, Any] | None:
        message = (params or {}).get("message", "")
        actions = [a.get("title", "") for a in (params or {}).get("actions") or []]
        if tuple(actions) == TRUST_CHOICES:
            return await self._trust(message, actions)
        approve = next((a for a in actions if a.lower() not in _DENY_WORDS), None)
        if self._approve_all and approve is not None:
            self._note(f"{message}\n→ {approve} (--yes)")
            return {"title": approve}
        if not self._interactive:
            self._note(f"{message}\n→ declined: no terminal to ask; pass --yes to approve")
            return None
        self._note(message)
        answer = await _in_daemon_thread(actions)
        return {"title": answer} if answer is not None else None

    async def _trust(self, message: str, actions: list[str]) -> dict[str, Any] | None:
        """A question about trusting the workspace's own files (see the class)."""
        use_now, _always, not_now, _never = TRUST_CHOICES
        if self._trust_project:
            self._note(f"{message}\n→ {use_now} (--trust-project)")
            return {"title": use_now}
        if self._approve_all or not self._interactive:
            why = "--yes answers actions, not trust" if self._approve_all else "no terminal"
            self._note(
                f"{message}\n→ {not_now} ({why}): pass --trust-project to use them, "
                "only for a repository you trust"
            )
            return {"title": not_now}
        self._note(message)
        answer = await _in_daemon_thread(actions)
        return {"title": answer} if answer is not None else None

    def show_document(self, params: Any) -> dict[str, Any]:
        """A page for the user (an MCP server's sign-in): printed, since a
        terminal opens no browser."""
        uri = (params or {}).get("uri", "")
        if not (params or {}).get("external"):
            return {"success": False}
        self._note(f"open this page in your browser: {uri}")
        return {"success": True}

    def show_message(self, params: Any) -> None:
        self._note((params or {}).get("message", ""))


async def _in_daemon_thread(actions: list[str]) -> str | None:
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str | None] = loop.create_future()

    def settle(value: str | None) -> None:
        if not answer.done():
            answer.set_result(value)

    def read() -> None:
        value = _ask_terminal(actions)
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle, value)

    threading.Thread(target=read, name="rhema-confirm", daemon=True).start()
    return await answer


def _ask_terminal(actions: list[str]) -> str | None:
    choices = "/".join(f"[{i + 1}] {a}" for i, a in enumerate(actions))
    sys.stderr.write(f"{choices} (Enter declines): ")
    sys.stderr.flush()
    line = sys.stdin.readline().strip()
    if line.isdigit() and 1 <= int(line) <= len(actions):
        return actions[int(line) - 1]
    matches = [a for a in actions if a.lower() == line.lower()]
    return matches[0] if matches else None
