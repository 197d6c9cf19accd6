"""Hostile inputs against every tool: each attempt is an in-band error, no
byte outside the roots is read or changed (sentinel tree hashed before and
after), no protected write happens without confirmation; and a symlink-swap
race loop records zero escapes."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from rhema_lsp.engine import ToolResult
from rhema_lsp.tools import Access, DiskEditor, PathRefused, ToolError, WorkspaceTools
from rhema_lsp.tools.workspace import Workspace

from .conftest import SECRET, Bench, tree_digest

pytestmark = pytest.mark.process  # starts child processes


def _hostile_tree(bench: Bench) -> None:
    root, outside = bench.root, bench.outside
    (root / "inner").mkdir()
    (root / "inner" / "ok.txt").write_text("fine\n")
    os.symlink(outside, root / "link_out")
    os.symlink("../outside", root / "link_rel")
    os.symlink(outside / "secret.txt", root / "link_file")
    os.symlink(outside / "missing.txt", root / "dangling")
    os.symlink("chain2", root / "chain1")
    os.symlink(outside / "secret.txt", root / "chain2")
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    os.symlink("/proc/self/root", root / "proc_root")
    os.symlink("inner/../../outside", root / "sneaky")
    os.link(outside / "secret.txt", root / "hard.txt")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".rhema").mkdir()
    (root / ".rhema" / "sessions.db").write_text("db\n")


def _attack_paths(bench: Bench) -> list[str]:
    outside, base = bench.outside, bench.base
    secret = str(outside / "secret.txt")
    return [
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        secret,
        str(outside),
        "~/secret.txt",
        "~root/.bashrc",
        str(base / "proj-evil" / "x.txt"),
        "../proj-evil/x.txt",
        str(base / "proj-evil"),
        "src/app.py\x00.txt",
        "/proc/self/root" + secret,
        "/proc/self/cwd",
        "link_out/secret.txt",
        "link_out",
        "link_rel/secret.txt",
        "link_file",
        "dangling",
        "chain1",
        "loop1",
        "proc_root" + secret,
        "sneaky/secret.txt",
        "file://" + quote(secret),
        "file://" + quote(str(bench.root)) + "/%2E%2E/outside/secret.txt",
        "file://evil.example" + quote(secret),
        "http://example.com/secret.txt",
        "vscode-remote://ssh/etc/passwd",
        "untitled:Untitled-1",
        ".git/config",
        ".GIT/config",
        ".ｇｉｔ/config",
        ".rhema/sessions.db",
        "src/../.rhema/sessions.db",
    ]


def _calls_for(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read_file", {"path": path}),
        ("list_dir", {"path": path}),
        ("find_files", {"pattern": "*", "path": path}),
        ("grep", {"pattern": "7f3a|core|db", "path": path}),
        ("edit_file", {"path": path, "old_text": SECRET, "new_text": "pwned"}),
        ("write_file", {"path": path, "content": "pwned\n"}),
        ("rename_path", {"from": path, "to": "stolen.txt"}),
        ("rename_path", {"from": "README.md", "to": path}),
        ("delete_path", {"path": path}),
    ]


async def test_every_tool_refuses_every_hostile_path(bench: Bench) -> None:
    _hostile_tree(bench)
    bench.editor.answer = None
    before_outside = tree_digest(bench.base / "outside")
    before_sibling = tree_digest(bench.base / "proj-evil")
    failures: list[str] = []
    for path in _attack_paths(bench):
        for name, args in _calls_for(path):
            result = await bench.call(name, **args)
            if not result.is_error:
                failures.append(f"{name} {args!r} succeeded: {result.content[:120]!r}")
            if SECRET in result.content:
                failures.append(f"{name} {args!r} leaked the sentinel")
    assert failures == []
    assert tree_digest(bench.base / "outside") == before_outside
    assert tree_digest(bench.base / "proj-evil") == before_sibling
    assert (bench.root / "README.md").read_text() == "# Project\n"
    assert not (bench.root / "stolen.txt").exists()
    assert bench.editor.asked == []  # refused before any question


async def test_refusals_name_the_path_and_why(bench: Bench) -> None:
    _hostile_tree(bench)
    cases = {
        "../outside/secret.txt": "outside the workspace",
        "~/x": "home-relative",
        "a\x00b": "NUL byte",
        "http://example.com/x": "not http: URIs",
        "link_out/secret.txt": "points outside the workspace",
        "loop1": "too many levels of symbolic links",
        ".git/config": "repository internals",
        ".rhema/sessions.db": "session store",
        str(bench.base / "proj-evil" / "x.txt"): "outside the workspace",
    }
    for path, why in cases.items():
        result = await bench.call("read_file", path=path)
        assert result.is_error
        assert why in result.content, (path, result.content)
        assert (repr(path) if "\x00" in path else path) in result.content


async def test_hard_links_are_refused_for_writes(bench: Bench) -> None:
    _hostile_tree(bench)
    before = tree_digest(bench.outside)
    for name, args in [
        ("edit_file", {"path": "hard.txt", "old_text": SECRET, "new_text": "pwned"}),
        ("write_file", {"path": "hard.txt", "content": "pwned\n"}),
        ("delete_path", {"path": "hard.txt"}),
        ("rename_path", {"from": "hard.txt", "to": "moved.txt"}),
    ]:
        result = await bench.call(name, **args)
        assert result.is_error and "hard links" in result.content
    assert tree_digest(bench.outside) == before


async def test_percent_decoding_happens_once(bench: Bench) -> None:
    double = "file://" + quote(str(bench.root)) + "/%252E%252E/note.txt"
    result = await bench.call("write_file", path=double, content="x\n")
    assert not result.is_error, result.content
    assert (bench.root / "%2E%2E" / "note.txt").read_text() == "x\n"


async def test_command_folder_swapped_for_a_link_is_refused(bench: Bench) -> None:
    (bench.root / "inner").mkdir()
    tools = WorkspaceTools([bench.root], bench.root / "inner", "agent", bench.editor)
    bench.tools = tools
    bench.editor.answer = "Run"
    os.rename(bench.root / "inner", bench.root / "inner-real")
    os.symlink(bench.outside, bench.root / "inner")
    result = await bench.call("run_command", command="cat secret.txt > stolen; pwd")
    assert result.is_error and "symbolic link" in result.content
    assert not (bench.outside / "stolen").exists()


def test_session_folder_outside_the_roots_is_rejected(bench: Bench) -> None:
    with pytest.raises(ValueError, match="not inside a workspace root"):
        WorkspaceTools([bench.root], bench.outside, "agent", bench.editor)


PROTECTED = [
    ".vscode/settings.json",
    ".VSCode/Tasks.JSON",
    "team.code-workspace",
    ".gitignore",
    ".gitattributes",
    ".env",
    ".env.local",
    ".envrc",
    ".npmrc",
    ".devcontainer/devcontainer.json",
    "package.json",
    "PACKAGE.JSON",
    "ｐａｃｋａｇｅ.json",  # full-width: NFKC folds it to package.json
    "web/package.json",
    ".github/workflows/ci.yml",
]


@pytest.mark.parametrize("path", PROTECTED)
async def test_protected_writes_need_confirmation(bench: Bench, path: str) -> None:
    bench.make("edit")
    bench.editor.answer = None
    denied = await bench.call("write_file", path=path, content="changed\n")
    assert denied.is_error and "did not allow" in denied.content
    assert not (bench.root / path).exists()
    assert len(bench.editor.asked) == 1
    bench.editor.answer = "Allow"
    allowed = await bench.call("write_file", path=path, content="changed\n")
    assert not allowed.is_error, allowed.content
    assert (bench.root / path).read_text() == "changed\n"


async def test_protected_edit_rename_delete_need_confirmation(bench: Bench) -> None:
    (bench.root / "package.json").write_text('{"scripts": {}}\n')
    bench.editor.answer = "Deny"
    for name, args in [
        ("edit_file", {"path": "package.json", "old_text": "{}", "new_text": '{"x": "rm"}'}),
        ("rename_path", {"from": "package.json", "to": "p.json"}),
        ("rename_path", {"from": "README.md", "to": ".envrc"}),
        ("delete_path", {"path": "package.json"}),
    ]:
        result = await bench.call(name, **args)
        assert result.is_error and "did not allow" in result.content, (name, result.content)
    assert (bench.root / "package.json").read_text() == '{"scripts": {}}\n'
    assert not (bench.root / ".envrc").exists()


@pytest.mark.parametrize("name", [".env", ".ENV.production", "server.pem", "id_rsa", "id_ed25519"])
async def test_sensitive_reads_need_confirmation(bench: Bench, name: str) -> None:
    (bench.root / name).write_text(SECRET + "\n")
    bench.editor.answer = None
    denied = await bench.call("read_file", path=name)
    assert denied.is_error and SECRET not in denied.content
    grep = await bench.call("grep", pattern="7f3a")
    assert SECRET not in grep.content
    direct = await bench.call("grep", pattern="7f3a", path=name)
    assert direct.is_error and SECRET not in direct.content
    bench.editor.answer = "Allow"
    allowed = await bench.call("read_file", path=name)
    assert SECRET in allowed.content


class Swapper(threading.Thread):
    """Flips ``root/swap`` between a real directory and a link to ``outside_dir``.

    A write that finds ``swap`` missing legitimately creates it as a new
    folder; such a stray folder is removed and the flipping goes on.
    """

    def __init__(self, root: Path, outside_dir: Path) -> None:
        super().__init__(daemon=True)
        self.real = root / "swap_real"
        self.link = root / "swap_link"
        self.swap = root / "swap"
        self.real.mkdir()
        (self.real / "file.txt").write_text("inside\n")
        os.symlink(outside_dir, self.link)
        self.stop = threading.Event()
        self.flips = 0
        self.strays = 0

    def _move(self, source: Path, target: Path) -> None:
        while True:
            try:
                os.rename(source, target)
                return
            except OSError:
                # a stray folder a write created: move it aside, atomically
                self.strays += 1
                os.rename(self.swap, self.swap.with_name(f"stray-{self.strays}"))

    def run(self) -> None:
        while not self.stop.is_set():
            self._move(self.real, self.swap)
            os.rename(self.swap, self.real)
            self._move(self.link, self.swap)
            os.rename(self.swap, self.link)
            self.flips += 1

    def __enter__(self) -> Swapper:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.join()


def test_symlink_swap_race_on_the_confined_primitives(bench: Bench) -> None:
    (bench.outside / "dir" / "file.txt").write_text(SECRET + "\n")
    before = tree_digest(bench.outside)
    ws = Workspace([bench.root], bench.root)
    writer = DiskEditor([bench.root])
    escapes = 0
    reads = writes = refused = 0
    with Swapper(bench.root, bench.outside / "dir") as swapper:
        for iteration in range(4000):
            try:
                target = ws.resolve("swap/file.txt", Access.READ)
                data, _size = ws.fs.read_bytes(target.path)
                reads += 1
                if SECRET.encode() in data:
                    escapes += 1
            except ToolError:
                refused += 1
            try:
                target = ws.resolve("swap/file.txt", Access.WRITE)
                writer.fs.write_atomic(target.path, f"inside {iteration}\n".encode())
                writes += 1
            except (ToolError, FileNotFoundError):
                refused += 1
    assert swapper.flips > 100
    assert escapes == 0
    assert tree_digest(bench.outside) == before
    assert reads > 0 and writes > 0 and refused > 0  # the race really was exercised


async def test_symlink_swap_race_through_the_tools(bench: Bench) -> None:
    (bench.outside / "dir" / "file.txt").write_text(SECRET + "\n")
    before = tree_digest(bench.outside)
    results: list[ToolResult] = []
    with Swapper(bench.root, bench.outside / "dir") as swapper:
        for iteration in range(1500):
            results.append(await bench.call("read_file", path="swap/file.txt"))
            results.append(
                await bench.call("write_file", path="swap/file.txt", content=f"in {iteration}\n")
            )
            if iteration % 10 == 0:
                results.append(await bench.call("list_dir", path="swap"))
                results.append(await bench.call("grep", pattern="7f3a|inside|in ", path="swap"))
                results.append(await bench.call("find_files", pattern="*.txt", path="swap"))
    assert swapper.flips > 100
    escapes = [r.content for r in results if SECRET in r.content]
    assert escapes == []
    assert tree_digest(bench.outside) == before
    assert any(not r.is_error for r in results)
    assert any(r.is_error for r in results)


def test_path_refused_is_a_tool_error() -> None:
    assert issubclass(PathRefused, ToolError)
