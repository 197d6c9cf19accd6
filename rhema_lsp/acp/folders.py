"""A session's folders: which ``cwd`` and additional directories the agent
takes as workspace roots, and why it refuses the others.

A root is an absolute path to an existing folder (taken as its real path,
links resolved) that confines something: ``/``, the home directory and any
folder above it, and the system's own trees are refused (the one root
policy, :func:`~rhema_lsp.tools.roots.unsafe_root_reason`). The rule is
kept here once, without the ACP SDK: the door checks a ``session/new`` it
answers before the SDK loads (:mod:`~rhema_lsp.acp.ready`) by it, and
:func:`~rhema_lsp.acp.sessions.real_folder` turns its refusal into the
request's error.
"""

from __future__ import annotations

import os
from pathlib import Path

from rhema_lsp.tools.roots import unsafe_root_reason

__all__ = ["folder_refusal"]


def folder_refusal(raw: str, what: str) -> tuple[Path, None] | tuple[None, str]:
    """``raw`` (a ``cwd`` or an additional directory) as a real folder, or
    why it is refused (``what`` names it in the reason)."""
    path = Path(raw)
    if not path.is_absolute():
        return None, f"{what} must be an absolute path, not {raw!r}"
    real = Path(os.path.realpath(path))
    if not real.is_dir():
        return None, f"{what} {raw} is not a folder"
    unsafe = unsafe_root_reason(real)
    if unsafe is not None:
        return None, f"{what} refused: {unsafe}"
    return real, None
