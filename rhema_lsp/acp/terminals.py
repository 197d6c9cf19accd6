"""``run_command`` in the client's terminal, when the client declared
``terminal: true``.

:class:`TerminalShell` is the session's :class:`~rhema_lsp.tools.commands.Shell`
for such a client: the same tool, the same approval and allow-list (asked
before the shell is reached), the same result for the model (the output,
then the exit status), but the command runs where the user sees it:

- ``terminal/create`` runs ``/bin/sh -c COMMAND`` in the session's folder
  (inside the sandbox when commands are sandboxed: the spawn gate's
  :func:`~rhema_lsp.tools.spawn.terminal_command`),
  in the editor's environment with the spawn gate's changes
  (:func:`~rhema_lsp.tools.spawn.terminal_environment`: credentials set
  empty, ``PATH`` without the workspace's or relative entries), keeping at
  most :data:`OUTPUT_LIMIT` bytes of output;
- the tool call's content becomes the terminal (``{"type": "terminal"}``),
  so the client streams its output live, and stays so with the result;
- ``terminal/wait_for_exit``, then ``terminal/output`` for the model;
- the run's cancellation (``session/cancel``, ``$/cancel_request``) or the
  command's timeout sends ``terminal/kill``;
- ``terminal/release`` always follows, however the call ended (shielded,
  at most :data:`RELEASE_WAIT` seconds).

A client that fails ``terminal/create`` fails the call in-band (the model
is told); nothing falls back to running the command in the agent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import anyio
from acp import RequestError
from acp.schema import EnvVariable

from rhema_lsp.acp.editor import AcpEditor
from rhema_lsp.acp.updates import UpdateStream
from rhema_lsp.engine.tools import CancelSignal, Progress
from rhema_lsp.tools import ToolError
from rhema_lsp.tools.commands import CommandOutcome, run_until_stopped
from rhema_lsp.tools.confined_fs import ConfinedFS
from rhema_lsp.tools.sandbox import Sandbox
from rhema_lsp.tools.spawn import terminal_command, terminal_environment

__all__ = ["OUTPUT_LIMIT", "RELEASE_WAIT", "TerminalClient", "TerminalShell"]

logger = logging.getLogger(__name__)

OUTPUT_LIMIT = 1_000_000
"""Bytes of output the client keeps for a command (its tail)."""

RELEASE_WAIT = 5.0
"""Seconds ``terminal/kill`` and ``terminal/release`` get once a call ends."""


class TerminalClient(Protocol):
    """The terminal requests of the SDK's connection to the client."""

    async def create_terminal(
        self, session_id: str, command: str, **kwargs: Any
    ) -> Any: ...  # CreateTerminalResponse

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any: ...

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> Any: ...

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any: ...

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any: ...


class TerminalShell:
    """Runs a session's commands in its client's terminals (see the module
    docstring)."""

    def __init__(
        self, client: TerminalClient, session_id: str, editor: AcpEditor, stream: UpdateStream
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.editor = editor
        self.stream = stream

    async def __call__(
        self,
        command: str,
        folder: Path,
        fs: ConfinedFS,
        env: Mapping[str, str],
        timeout_s: float,
        cancel: CancelSignal,
        progress: Progress,
        sandbox: Sandbox | None = None,
    ) -> CommandOutcome:
        """Run ``command`` in a terminal of the client (inside ``sandbox``
        when given); killed on ``cancel`` and after ``timeout_s``; always
        released."""
        variables = await anyio.to_thread.run_sync(terminal_environment, fs.roots, env)
        program, arguments = await anyio.to_thread.run_sync(
            terminal_command, command, folder, fs.roots, sandbox
        )
        try:
            created = await self.client.create_terminal(
                session_id=self.session_id,
                command=program,
                args=arguments,
                env=[EnvVariable(name=name, value=value) for name, value in variables.items()],
                cwd=str(folder),
                output_byte_limit=OUTPUT_LIMIT,
            )
        except (RequestError, ConnectionError) as exc:
            raise ToolError(f"the editor could not run the command in a terminal: {exc}") from exc
        terminal = str(created.terminal_id)
        call_id = self.editor.call_id
        if call_id is not None:
            self.stream.call_terminal(call_id, terminal)
        exited = False

        async def until_exit() -> None:
            nonlocal exited
            await self.client.wait_for_terminal_exit(
                session_id=self.session_id, terminal_id=terminal
            )
            exited = True

        try:
            status = await run_until_stopped(until_exit, cancel, timeout_s)
            if not exited:
                await self._kill(terminal)
            output = await self.client.terminal_output(
                session_id=self.session_id, terminal_id=terminal
            )
        except (RequestError, ConnectionError) as exc:
            raise ToolError(f"the editor's terminal failed: {exc}") from exc
        finally:
            with anyio.CancelScope(shield=True):
                if not exited:  # the awaiting task itself was cancelled
                    await self._kill(terminal)
                await self._release(terminal)
        text = str(output.output)
        if output.truncated:
            text = f"[... the start of the output was cut: {OUTPUT_LIMIT} bytes kept ...]\n{text}"
        exit_status = output.exit_status
        code = exit_status.exit_code if exit_status is not None else None
        if text and not text.endswith("\n"):
            text += "\n"
        return CommandOutcome(text, code, status)

    async def _kill(self, terminal: str) -> None:
        with anyio.move_on_after(RELEASE_WAIT):
            try:
                await self.client.kill_terminal(session_id=self.session_id, terminal_id=terminal)
            except (RequestError, ConnectionError) as exc:
                logger.info("terminal %s: kill failed: %s", terminal, exc)

    async def _release(self, terminal: str) -> None:
        with anyio.move_on_after(RELEASE_WAIT):
            try:
                await self.client.release_terminal(session_id=self.session_id, terminal_id=terminal)
            except (RequestError, ConnectionError) as exc:
                logger.info("terminal %s: release failed: %s", terminal, exc)
