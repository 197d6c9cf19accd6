"""What a client declares at ``initialize``, beside its settings.

``initializationOptions.clientCapabilities`` says what the client can show
(see "Clients without a rhema plugin" in ``docs/protocol.md``); the server
adapts its output to it. Unknown keys are ignored: the settings share the
object, and a newer client may declare more.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, ValidationError

from rhema_lsp.contract.base import Wire

__all__ = ["DeclaredCapabilities", "InitializationOptions", "declared_capabilities"]


class DeclaredCapabilities(Wire):
    """What a rhema client implements."""

    model_config = ConfigDict(extra="ignore")

    events: bool = False
    """It renders ``rhema/event`` (no transcript, no closing message)."""
    edit_selection: bool = False
    """It implements the client-side command ``rhema.editSelection``."""
    language: bool = False
    """It answers ``rhema/language`` from the editor's own language servers."""


class InitializationOptions(Wire):
    """The contract's part of ``initializationOptions`` (the settings are the rest)."""

    model_config = ConfigDict(extra="ignore")

    client_capabilities: DeclaredCapabilities | None = None


def declared_capabilities(options: Any) -> DeclaredCapabilities:
    """What ``initializationOptions`` declare; nothing when absent or malformed."""
    if not isinstance(options, dict):
        return DeclaredCapabilities()
    try:
        parsed = InitializationOptions.model_validate(options)
    except ValidationError:
        return DeclaredCapabilities()
    return parsed.client_capabilities or DeclaredCapabilities()
