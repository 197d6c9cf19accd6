"""Which folders may be workspace roots at all: :func:`unsafe_root_reason`.

A root confines the agent; ``/`` and the user's home directory would
confine nothing. The rule is the confinement gate's
(:mod:`~rhema_lsp.tools.gate` re-exports it); it lives here, on its own,
because a door checks a client's folders before it loads anything heavy
(``rhema-lsp acp`` answers ``session/new`` before the tools load:
:mod:`~rhema_lsp.acp.folders`). It imports nothing but the standard
library's path functions.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["unsafe_root_reason"]


def unsafe_root_reason(path: Path) -> str | None:
    """Why ``path`` may not be a workspace folder, or ``None``.

    ``/`` and the user's home directory hold every secret the user has
    (keys, shell history, other projects): an agent confined to them is
    not confined.
    """
    real = Path(os.path.realpath(path))
    if real == Path(real.anchor):
        return f"{path} is the file system's root: the agent would reach every file"
    home = os.environ.get("HOME")
    if home and real == Path(os.path.realpath(home)):
        return (
            f"{path} is your home directory: the agent would reach your keys and every "
            "other project; open a project folder instead"
        )
    return None
