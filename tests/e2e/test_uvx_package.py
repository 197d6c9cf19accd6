"""``uvx --from <wheel> rhema-lsp acp`` answers ``initialize`` on a machine
without a compiler: the way the ACP registry's ``uvx`` distribution starts
the agent (docs/acp.md, *The ACP registry*).

The wheel is built once from a copy of this checkout's sources (nothing is
written into the checkout); ``uv tool run`` (what ``uvx`` is) installs it
and its dependencies into a fresh environment with ``--no-build`` (no
source distribution may be built: the default install has no compile step,
the embedded model's runtime being the ``local`` extra) and ``--offline``
(the packages come from uv's own cache, which one online run fills when it
is cold), in an environment of nothing but ``HOME`` and a ``PATH`` folder
holding the system's programs less every compiler, linker and build tool.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rhema_lsp.acp.handshake import PROTOCOL_VERSION

REPO = Path(__file__).resolve().parents[2]

COMPILERS = re.compile(
    r"^(cc|c\+\+|cpp|gcc|g\+\+|clang|clang\+\+|tcc|ld|as|make|cmake|ninja|rustc|cargo)([-.].*)?$"
    r"|.*-(gcc|g\+\+|cc|ld|as)(-[0-9.]+)?$"
)
"""Every compiler, linker and build tool a build step could use."""


def _uv() -> str:
    import uv  # the test extra's: the PyPI package ships the binary

    return str(uv.find_uv_bin())


def _run(
    args: list[str], stdin: str = "", env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        input=stdin,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _offline_first(
    args: list[str], stdin: str = "", env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``args`` with ``--offline`` (after the subcommand's words); once more
    online when uv's cache is cold (a new machine), then offline again."""
    offline = [*args[:3], "--offline", *args[3:]]
    done = _run(offline, stdin, env, cwd)
    if done.returncode != 0 and "network was disabled" in done.stderr + done.stdout:
        warm = None if env is None else {**os.environ, "UV_CACHE_DIR": env["UV_CACHE_DIR"]}
        _run(args, stdin, warm, cwd)
        done = _run(offline, stdin, env, cwd)
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(
        REPO / "rhema_lsp", source / "rhema_lsp", ignore=shutil.ignore_patterns("__pycache__")
    )
    out = tmp_path_factory.mktemp("dist")
    built = _offline_first([_uv(), "build", "--wheel", "--out-dir", str(out), str(source)])
    assert built.returncode == 0, built.stderr
    (found,) = out.glob("rhema_lsp-*.whl")
    return found


def _no_compilers(folder: Path) -> Path:
    folder.mkdir()
    for directory in ("/usr/local/bin", "/usr/bin", "/bin"):
        for entry in sorted(Path(directory).iterdir()) if Path(directory).is_dir() else []:
            target = folder / entry.name
            if not COMPILERS.match(entry.name) and not target.exists():
                target.symlink_to(entry)
    (folder / "uv").unlink(missing_ok=True)
    (folder / "uv").symlink_to(_uv())
    return folder


def test_uvx_from_the_wheel_answers_initialize_without_a_compiler(
    wheel: Path, tmp_path: Path
) -> None:
    bin_dir = _no_compilers(tmp_path / "bin")
    assert not any(shutil.which(tool, path=str(bin_dir)) for tool in ("cc", "gcc", "clang"))
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": str(bin_dir),
        "UV_CACHE_DIR": _run([_uv(), "cache", "dir"]).stdout.strip(),  # the installed cache
    }
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": True}}},
    }
    run = [
        _uv(),
        "tool",
        "run",
        "--no-build",
        "--python",
        sys.executable,
        "--from",
        str(wheel),
        "rhema-lsp",
        "acp",
    ]
    done = _offline_first(run, json.dumps(initialize) + "\n", env, tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["id"] == 0 and answer["result"]["protocolVersion"] == PROTOCOL_VERSION
    assert answer["result"]["agentInfo"]["name"] == "rhema-lsp"
    methods = {m["id"] for m in answer["result"]["authMethods"]}
    assert methods == {"rhema-setup", "local-server"}
