"""Which workspace paths are off limits, and which need the user's say-so.

All matching is on path components relative to a workspace root, after
Unicode NFKC normalisation (which includes NFC) and case folding, so
``.GIT``, ``.ｇｉｔ`` (full-width) and ``Package.JSON`` match like their plain
spellings.

- Forbidden to every tool, read or write: anything under ``.git`` (a
  component named ``.git``, directory or worktree file) or ``.rhema`` (the
  session store).
- Writes needing confirmation (even in ``edit`` mode): ``.vscode/**.json``,
  ``*.code-workspace``, ``.git*`` files (``.gitignore``, ``.gitmodules``...),
  ``.env*`` (``.envrc`` included), ``.npmrc``, anything under
  ``.devcontainer/`` or ``.github/workflows/``, ``package.json``; deleting a
  directory; renaming or deleting ``.github``, ``.vscode`` or ``.devcontainer``
  themselves.
- Reads needing confirmation: ``.env*``, ``*.pem``, and SSH-style private
  keys ``id_*`` without an extension (``id_rsa``, ``id_ed25519``).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence

__all__ = ["folded", "forbidden_reason", "read_confirmation_reason", "write_confirmation_reason"]

_FORBIDDEN_DIRS = {".git": "repository internals (.git)", ".rhema": "the session store (.rhema)"}
_PROTECTED_DIRS = {".github", ".vscode", ".devcontainer"}
_PRIVATE_KEY = re.compile(r"^id_[^.]+$")


def folded(part: str) -> str:
    """``part`` NFC- then NFKC-normalised and case-folded, for comparisons."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFC", part)).casefold()


def _fold_all(parts: Sequence[str]) -> list[str]:
    return [folded(part) for part in parts]


def forbidden_reason(parts: Sequence[str]) -> str | None:
    """Why a root-relative path may not be touched at all, or ``None``."""
    for part in _fold_all(parts):
        if part in _FORBIDDEN_DIRS:
            return f"it is inside {_FORBIDDEN_DIRS[part]}, which no tool may read or write"
    return None


def write_confirmation_reason(parts: Sequence[str], *, is_dir: bool = False) -> str | None:
    """Why writing (creating, changing, renaming, deleting) the root-relative
    path needs the user's confirmation, or ``None``."""
    names = _fold_all(parts)
    if not names:
        return "it is a workspace folder itself"
    name = names[-1]
    parents = names[:-1]
    for first, second in itertools.pairwise(names):
        if first == ".github" and second == "workflows":
            return "it is a CI workflow (.github/workflows)"
    if ".devcontainer" in names:
        return "it configures the dev container (.devcontainer)"
    if ".vscode" in parents and name.endswith(".json"):
        return "it is editor configuration (.vscode/*.json)"
    if name.endswith(".code-workspace"):
        return "it is a workspace file (*.code-workspace)"
    if name.startswith(".git"):
        return "it is git configuration (.git*)"
    if name.startswith(".env"):
        return "it holds environment settings (.env*)"
    if name == ".npmrc":
        return "it configures npm (.npmrc)"
    if name == "package.json":
        return "it defines package scripts (package.json)"
    if name in _PROTECTED_DIRS:
        return f"it is the {name} folder"
    if is_dir:
        return "it is a directory: everything inside it is affected"
    return None


def read_confirmation_reason(parts: Sequence[str]) -> str | None:
    """Why reading the root-relative path needs the user's confirmation."""
    names = _fold_all(parts)
    if not names:
        return None
    name = names[-1]
    if name.startswith(".env"):
        return "it may hold secrets (.env*)"
    if name.endswith(".pem"):
        return "it may be a private key (*.pem)"
    if _PRIVATE_KEY.match(name):
        return "it may be a private key (id_*)"
    return None
