"""The tools' :class:`~rhema_lsp.tools.Editor` over ACP: the client's buffers,
its writes, and its permission prompts.

Reads: when the client declares ``fs.readTextFile``, the file a call is about
to touch is fetched with ``fs/read_text_file`` before the call runs
(:meth:`AcpEditor.fetch`), so the tools see the editor's text, unsaved
changes included, as an open document. Fetched buffers live for that one
call and are forgotten when it ends (:meth:`AcpEditor.end_call`): the next
call asks again, so nothing stale is ever served. What the editor holds for
a call (its buffers, its diffs, the call that permission requests name) is
that call's own, kept in a context variable: the calls of one step that run
together (MCP calls) each see theirs.

Writes: text edits and file creation become whole-file
``fs/write_text_file`` requests when the client declares
``fs.writeTextFile`` (the editor applies them to its buffer, with its undo);
renames and deletions, which ACP has no request for, and every write to a
client without the capability go to disk through
:class:`~rhema_lsp.tools.DiskEditor`, confined to the workspace roots. Either
way the new text is checked against what the tool expects before anything
is written, and each changed file is remembered as a :class:`FileDiff` for
the call's ``tool_call_update``.

Confirmations: ``session/request_permission`` with allow once, allow always
(for this session: the same question is not asked again) and reject; a
dismissed or failed request declines.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio.to_thread
from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)
from lsprotocol.types import (
    CreateFile,
    SnippetTextEdit,
    TextDocumentEdit,
    TextEdit,
    WorkspaceEdit,
)
from pydantic import ValidationError

from rhema_lsp.acp.updates import FileDiff, UpdateStream, text_content
from rhema_lsp.tools import DiskEditor, EditOutcome, OpenDocument, ToolError, uri_to_path
from rhema_lsp.tools.editor import DENY, approving_choice
from rhema_lsp.tools.positions import apply_text_edits

__all__ = ["AcpClient", "AcpEditor"]

logger = logging.getLogger(__name__)

POSITION_ENCODING = "utf-16"
"""The unit of the edits the tools send; the editor applies them itself."""


class AcpClient(Protocol):
    """The slice of the SDK's client connection the agent calls."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """``session/update``."""
        ...

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        """``fs/read_text_file``."""
        ...

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        """``fs/write_text_file``."""
        ...

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        """``session/request_permission``."""
        ...


@dataclass(slots=True)
class _Buffer:
    text: str
    version: int


@dataclass(slots=True)
class _CallState:
    """What the editor holds for one call in flight."""

    call: ToolCallUpdate | None = None
    stream: UpdateStream | None = None
    diffs: list[FileDiff] = field(default_factory=list)
    buffers: dict[Path, _Buffer] = field(default_factory=dict)
    answers: dict[str, str | None] = field(default_factory=dict)
    """The questions asked during the call, and their answers (the same
    question within one call is answered once)."""


CLIENT_FAILED = (RequestError, ConnectionError, ValidationError)
"""What a request to the client can end in besides its answer: an error
reply, the connection gone, or an answer the schema refuses (a client
mistake, handled where the agent asked, like an error reply)."""


def _failure(exc: BaseException) -> str:
    """One line for what went wrong with a request to the client."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the answer"
        return f"an answer the protocol does not allow ({where}: {first['msg']})"
    return str(exc)


_versions = itertools.count(1)


def _key(uri: str) -> Path:
    return Path(os.path.normpath(uri_to_path(uri)))


def first_changed_line(old: str | None, new: str) -> int:
    """The 0-based number of the first line where ``old`` and ``new`` differ."""
    if old is None:
        return 0
    for number, (a, b) in enumerate(zip(old.splitlines(), new.splitlines(), strict=False)):
        if a != b:
            return number
    return min(old.count("\n"), new.count("\n"))


class AcpEditor:
    """One ACP session's editor (see the module docstring).

    Parameters
    ----------
    client
        The SDK's connection to the client.
    session_id
        The ACP session the requests belong to.
    roots
        The workspace roots (disk writes are confined to them).
    read_through, write_through
        Whether the client declared ``fs.readTextFile`` / ``fs.writeTextFile``.
    """

    position_encoding = POSITION_ENCODING
    supports_document_changes = True
    supports_resource_operations = True
    supports_change_annotations = False

    def __init__(
        self,
        client: AcpClient,
        session_id: str,
        roots: Sequence[Path],
        *,
        read_through: bool,
        write_through: bool,
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.read_through = read_through
        self.write_through = write_through
        self.disk = DiskEditor(roots, position_encoding=POSITION_ENCODING)
        self.always_allowed: set[str] = set()
        self._calls: ContextVar[_CallState | None] = ContextVar(
            f"acp-call-{session_id}", default=None
        )
        self._idle = _CallState()

    # -- the call in flight ----------------------------------------------------

    def begin_call(self, call: ToolCallUpdate, stream: UpdateStream | None = None) -> None:
        """A call starts: permission requests name it; ``stream`` hears when
        it is under way (approved, or editing)."""
        self._calls.set(_CallState(call, stream))

    @property
    def _now(self) -> _CallState:
        """The state of the call in flight in this task (or the idle one)."""
        return self._calls.get() or self._idle

    @property
    def call_id(self) -> str | None:
        """The id of the call in flight, if any."""
        call = self._now.call
        return None if call is None else call.tool_call_id

    def _under_way(self) -> None:
        state = self._now
        if state.stream is not None and state.call is not None:
            state.stream.call_started(state.call.tool_call_id)

    def end_call(self) -> list[FileDiff]:
        """The call ended: forget its buffers; the files it changed."""
        state = self._now
        self._calls.set(None)
        self._idle.buffers.clear()
        return state.diffs

    async def fetch(self, path: Path) -> None:
        """Hold the client's text of ``path`` (a file on disk) for this call."""
        if not self.read_through:
            return
        try:
            response = await self.client.read_text_file(self.session_id, str(path))
        except CLIENT_FAILED as exc:
            logger.info("the client did not give %s (%s); reading the disk", path, _failure(exc))
            return
        self._now.buffers[path] = _Buffer(response.content, next(_versions))

    # -- Editor: documents -----------------------------------------------------

    def open_document(self, uri: str) -> OpenDocument | None:
        """The client's text of ``uri``, if fetched for this call."""
        buffer = self._now.buffers.get(_key(uri))
        return None if buffer is None else OpenDocument(uri, buffer.text, buffer.version)

    def open_documents(self) -> list[OpenDocument]:
        """The documents fetched for this call."""
        return [OpenDocument(p.as_uri(), b.text, b.version) for p, b in self._now.buffers.items()]

    # -- Editor: confirmations -------------------------------------------------

    async def confirm(self, message: str, choices: Sequence[str]) -> str | None:
        """Ask through ``session/request_permission``; the choice that is not
        "Deny" allows."""
        allow = approving_choice(choices)
        if allow is None:
            return None
        if message in self.always_allowed:
            self._under_way()
            return allow
        state = self._now
        if state.call is not None and message in state.answers:
            return state.answers[message]
        answer = await self._ask(message, allow)
        if state.call is not None:
            state.answers[message] = answer
        return answer

    async def _ask(self, message: str, allow: str) -> str | None:
        reject = DENY
        shown = self._now.call or ToolCallUpdate(tool_call_id="rhema-confirm", title=message)
        asked = shown.model_copy(update={"content": [text_content(message)], "status": "pending"})
        stream = self._now.stream
        if stream is not None:
            await stream.sent()  # the call's title and arguments first
        options = [
            PermissionOption(option_id="allow_once", name=allow, kind="allow_once"),
            PermissionOption(
                option_id="allow_always", name=f"{allow}, always this session", kind="allow_always"
            ),
            PermissionOption(option_id="reject_once", name=reject, kind="reject_once"),
        ]
        try:
            response = await self.client.request_permission(self.session_id, asked, options)
        except CLIENT_FAILED as exc:
            logger.warning("the permission request failed (%s); declined", _failure(exc))
            return None
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome):
            return None
        if outcome.option_id == "allow_always":
            self.always_allowed.add(message)
        elif outcome.option_id != "allow_once":
            return None
        self._under_way()
        return allow

    # -- Editor: edits ---------------------------------------------------------

    async def apply_edit(
        self, edit: WorkspaceEdit, label: str, expected: Mapping[str, str | None]
    ) -> EditOutcome:
        """Write through the client when it can, else on disk (module docstring)."""
        self._under_way()
        changes = edit.document_changes or []
        text_only = all(isinstance(c, TextDocumentEdit | CreateFile) for c in changes)
        before = {uri: await self._text_now(_key(uri)) for uri in expected}
        if self.write_through and text_only:
            outcome = await self._write_through(edit, expected)
        else:
            outcome = await self.disk.apply_edit(edit, label, expected)
            for uri in expected:
                self._now.buffers.pop(_key(uri), None)
        if outcome.applied and text_only:
            for uri, new in expected.items():
                if new is not None:
                    old = before[uri]
                    self._now.diffs.append(
                        FileDiff(_key(uri), old, new, first_changed_line(old, new))
                    )
        return outcome

    async def _text_now(self, path: Path) -> str | None:
        buffer = self._now.buffers.get(path)
        if buffer is not None:
            return buffer.text
        return await anyio.to_thread.run_sync(self._disk_text, path)

    def _disk_text(self, path: Path) -> str | None:
        try:
            if self.disk.fs.lstat(path) is None:
                return None
            data, _size = self.disk.fs.read_bytes(path)
            return data.decode("utf-8")
        except (OSError, ValueError, ToolError):
            return None

    async def _write_through(
        self, edit: WorkspaceEdit, expected: Mapping[str, str | None]
    ) -> EditOutcome:
        planned: dict[Path, str] = {}
        try:
            for change in edit.document_changes or []:
                if isinstance(change, CreateFile):
                    path = _key(change.uri)
                    exists = path in planned or await self._text_now(path) is not None
                    overwrite = change.options is not None and change.options.overwrite
                    if exists and not overwrite:
                        return EditOutcome(False, f"{path}: already exists")
                    planned[path] = ""
                elif isinstance(change, TextDocumentEdit):
                    path = _key(change.text_document.uri)
                    buffer = self._now.buffers.get(path)
                    version = change.text_document.version
                    if version is not None and buffer is not None and buffer.version != version:
                        return EditOutcome(False, f"{path}: the buffer changed since it was read")
                    edits = [
                        TextEdit(range=e.range, new_text=e.snippet.value)
                        if isinstance(e, SnippetTextEdit)
                        else TextEdit(range=e.range, new_text=e.new_text)
                        for e in change.edits
                    ]
                    planned[path] = await self._edited(path, planned, edits)
            for uri, edits_of in (edit.changes or {}).items():
                path = _key(uri)
                planned[path] = await self._edited(path, planned, list(edits_of))
        except ToolError as exc:
            return EditOutcome(False, str(exc))
        for uri, want in expected.items():
            if want is not None and planned.get(_key(uri)) != want:
                return EditOutcome(False, f"{_key(uri)}: the file changed since it was read")
        for path, text in planned.items():
            try:
                await self.client.write_text_file(self.session_id, str(path), text)
            except CLIENT_FAILED as exc:
                return EditOutcome(False, f"the editor refused to write {path}: {_failure(exc)}")
            self._now.buffers[path] = _Buffer(text, next(_versions))
        return EditOutcome(True)

    async def _edited(self, path: Path, planned: Mapping[Path, str], edits: list[TextEdit]) -> str:
        base = planned[path] if path in planned else await self._text_now(path)
        if base is None:
            raise ToolError(f"{path}: no such file to edit")
        try:
            return apply_text_edits(base, edits, POSITION_ENCODING)
        except ValueError as exc:
            raise ToolError(f"{path}: the edit does not fit the text ({exc})") from exc
