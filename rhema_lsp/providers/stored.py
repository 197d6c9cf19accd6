"""The provider a user chose in a terminal: one small file of the user's.

``rhema-lsp acp --setup`` (what an ACP client runs for the agent's Terminal
Auth) and the agent's own Agent Auth (a local model server found on this
machine) store the choice here; ``rhema-lsp acp`` uses it when its flags
name no provider nor endpoint.

The rules it keeps:

- It imports nothing heavy: ``rhema-lsp acp`` reads it before its first
  answer (:func:`with_stored`).
- The file is ``<user config dir>/rhema-lsp/provider.json`` (platformdirs;
  ``$XDG_CONFIG_HOME`` on Linux), never in a workspace. Its folder is made
  ``0700``; the file is written whole (a new file created ``0600``, then
  renamed over the old one), so a reader never sees half of it and no
  other user ever can read it.
- A file another user may read or write, that is not a regular file, or
  that does not hold the fields as written is ignored (with a warning that
  names the path, never a value): the agent then starts as if nothing was
  chosen.
- A key typed in the terminal is kept in the file and handed to the agent
  only through the variable its provider reads
  (:func:`rhema_lsp.acp.auth.key_variables`), so
  every rule of the environment's keys holds for it (bound to its origin,
  never in a child's environment, scrubbed from every body sent); a
  variable the editor's environment already sets wins.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from platformdirs import user_config_dir

from rhema_lsp.providers.presets import PRESETS, PROTOCOLS

__all__ = [
    "StoredChoice",
    "choice_path",
    "follows_stored",
    "read_choice",
    "with_stored",
    "write_choice",
]

logger = logging.getLogger(__name__)

FILE_NAME = "provider.json"


@dataclass(frozen=True, slots=True)
class StoredChoice:
    """A provider choice as stored (the settings' camelCase names on disk).

    ``provider`` is a preset's name or ``custom``; ``key`` the key the user
    typed (``None``: its provider's variable, or no key, as for a local
    server).
    """

    provider: str
    model: str | None = None
    base_url: str | None = None
    protocol: str | None = None
    key: str | None = None

    def settings(self) -> dict[str, str]:
        """The choice as the command line's settings (camelCase), no key."""
        fields = {
            "provider": self.provider,
            "model": self.model,
            "baseUrl": self.base_url,
            "protocol": self.protocol,
        }
        return {name: value for name, value in fields.items() if value}

    def __repr__(self) -> str:  # the key never shows
        shown = {**asdict(self), "key": "***" if self.key else None}
        return f"StoredChoice({shown})"


def choice_path(config_dir: Path | None = None) -> Path:
    """Where the choice is kept (``config_dir``: the user config directory's
    ``rhema-lsp`` folder, by default)."""
    folder = config_dir or Path(user_config_dir("rhema-lsp", appauthor=False))
    return folder / FILE_NAME


def write_choice(choice: StoredChoice, path: Path | None = None) -> Path:
    """Store ``choice`` (see the module docstring); returns the file's path."""
    path = path or choice_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    data = {"version": 1, **{k: v for k, v in asdict(choice).items() if v is not None}}
    text = json.dumps(data, indent=2) + "\n"
    fresh = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(fresh, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            fd = -1
            out.write(text)
        os.replace(fresh, path)
    finally:
        if fd >= 0:
            os.close(fd)
        fresh.unlink(missing_ok=True)
    return path


def _text(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(name)
    return value.strip()


def read_choice(path: Path | None = None) -> StoredChoice | None:
    """The stored choice, or ``None`` (nothing stored, or a file refused:
    see the module docstring)."""
    path = path or choice_path()
    try:
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077 or info.st_uid != os.getuid():
        logger.warning("%s ignored: it must be a file only you can read (chmod 600)", path)
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not an object")
        provider = (_text(data, "provider") or "").lower()
        protocol = _text(data, "protocol")
        if provider != "custom" and provider not in PRESETS:
            raise ValueError("provider")
        if protocol is not None and protocol not in PROTOCOLS:
            raise ValueError("protocol")
        return StoredChoice(
            provider,
            _text(data, "model"),
            _text(data, "baseUrl") or _text(data, "base_url"),
            protocol,
            _text(data, "key"),
        )
    except (OSError, ValueError) as exc:
        logger.warning("%s ignored: it does not hold a provider choice (%s)", path, exc)
        return None


def follows_stored(raw_settings: Mapping[str, Any]) -> bool:
    """Whether the command line's settings (camelCase) leave the provider to
    the stored choice: they name no provider nor endpoint."""
    return not (raw_settings.get("provider") or raw_settings.get("baseUrl"))


def with_stored(raw_settings: Mapping[str, Any], path: Path | None = None) -> dict[str, Any]:
    """The command line's settings with the stored choice under them (when
    it is followed), for what is decided before the agent loads (the early
    ``initialize``'s image capability)."""
    choice = read_choice(path) if follows_stored(raw_settings) else None
    if choice is None:
        return dict(raw_settings)
    return {**choice.settings(), **{k: v for k, v in raw_settings.items() if v is not None}}
