"""How provider messages name the settings, for the user reading them.

An editor's user writes ``rhema.provider``; a terminal's writes
``--provider``. Every message of :mod:`.resolve` and :mod:`.setup` names
settings through one :class:`SettingNames`, so the same sentence reads right
in both.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EDITOR_NAMES", "SettingNames"]


@dataclass(frozen=True, slots=True)
class SettingNames:
    """How error messages name the provider settings, and where keys go.

    Parameters
    ----------
    provider, model, base_url, protocol
        The names the user writes: ``rhema.provider`` in an editor,
        ``--provider`` on the command line.
    set_key
        How to provide an environment variable; ``{var}`` is replaced.
    """

    provider: str = "rhema.provider"
    model: str = "rhema.model"
    base_url: str = "rhema.baseUrl"
    protocol: str = "rhema.protocol"
    set_key: str = (
        "set {var} in the environment of the process that starts rhema-lsp (it is never "
        "read from settings or files) and restart the language server"
    )


EDITOR_NAMES = SettingNames()
"""The editor's names (``rhema.*`` settings), the default."""
