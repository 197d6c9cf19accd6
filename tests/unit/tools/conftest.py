"""Fixtures for the tools tests: a real workspace on disk, a sentinel tree
outside it, and a helper to call a tool like the engine does."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.engine import ToolCall, ToolContext, ToolResult
from rhema_lsp.tools import MemoryEditor, WorkspaceTools
from rhema_lsp.vocabulary import Mode

SECRET = "SENTINEL-SECRET-7f3a"


def tree_digest(root: Path) -> str:
    """A hash of every name, mode and content below ``root`` (links not followed)."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames + dirnames):
            path = Path(dirpath) / name
            info = path.lstat()
            digest.update(f"{path.relative_to(root)}|{info.st_mode}|{info.st_nlink}".encode())
            if path.is_symlink():
                digest.update(os.readlink(path).encode())
            elif path.is_file():
                digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass
class Bench:
    """A workspace with an outside sentinel tree and a tools instance."""

    base: Path
    root: Path
    outside: Path
    editor: MemoryEditor
    tools: WorkspaceTools
    progress: list[str] = field(default_factory=list)

    def make(self, mode: Mode = "agent", **kwargs: Any) -> WorkspaceTools:
        self.tools = WorkspaceTools([self.root], self.root, mode, self.editor, **kwargs)
        return self.tools

    async def call(self, name: str, run_id: str = "turn-1", **args: Any) -> ToolResult:
        ctx = ToolContext(cwd=self.root, run_id=run_id)
        call = ToolCall(id=f"call-{name}", name=name, args=args)
        return await self.tools.resolve_streaming(call, ctx, self.progress.append)

    def uri(self, relative: str) -> str:
        return (self.root / relative).as_uri()


@pytest.fixture
def bench(tmp_path: Path) -> Bench:
    base = tmp_path.resolve()
    root = base / "proj"
    outside = base / "outside"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "README.md").write_text("# Project\n")
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (outside / "dir").mkdir()
    (outside / "dir" / "inner.txt").write_text(SECRET + " inner\n")
    sibling = base / "proj-evil"
    sibling.mkdir()
    (sibling / "x.txt").write_text(SECRET + "\n")
    editor = MemoryEditor([root])
    tools = WorkspaceTools([root], root, "agent", editor)
    return Bench(base, root, outside, editor, tools)


Runner = Callable[..., Coroutine[Any, Any, ToolResult]]
