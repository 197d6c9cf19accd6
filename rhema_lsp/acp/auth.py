"""ACP authentication: the provider choice stored by a sign-in, followed.

An agent in the ACP registry must offer Terminal Auth or Agent Auth. Here
"signing in" is choosing the model provider, and both methods store the
choice in the user's own file (:mod:`~rhema_lsp.providers.stored`), never
in a workspace:

- **Terminal Auth** (``rhema-setup``, offered only to a client that
  declares ``auth.terminal``): the client runs the agent's command with
  ``--setup`` in a terminal (:mod:`rhema_lsp.cli.setup`, the editors' setup
  card's choices); the client never passes it to ``authenticate``.
- **Agent Auth** (``local-server``): ``authenticate`` probes the local model
  servers' default ports (the same probe as the setup card) and stores the
  first one that lists a model; none answering is -32000 (ACP's
  ``auth_required``) saying what to start.

:class:`StoredProvider` is what the agent follows: when its command line
names no provider nor endpoint, every session opened (``session/new``,
``load``, ``resume``, ``fork``) re-reads the stored choice, so the session
after a sign-in uses it, on the same connection or the next. A key in the
choice reaches the provider only through its variable in the agent's
environment (:func:`key_variables`); a variable
the editor's environment sets wins, and one this class set is replaced or
removed when the choice changes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import MutableMapping
from pathlib import Path

import anyio.to_thread

from rhema_lsp.acp.errors import AcpAgentError
from rhema_lsp.acp.handshake import LOCAL_METHOD, SETUP_METHOD
from rhema_lsp.providers.local import DETECT_TIMEOUT, find_local_servers, port_list
from rhema_lsp.providers.presets import CUSTOM_KEY_VAR, LOCAL_AUTODETECT, PRESETS, LocalServer
from rhema_lsp.providers.secrets import KEY_ORIGINS_VAR, origin_of
from rhema_lsp.providers.stored import StoredChoice, choice_path, read_choice, write_choice
from rhema_lsp.runs.settings import Settings

__all__ = ["AUTH_REQUIRED", "AuthFailed", "StoredProvider", "key_variables", "sign_in_locally"]

logger = logging.getLogger(__name__)

AUTH_REQUIRED = -32000
"""ACP's error code for "authenticate first" (the SDK's ``auth_required``)."""


class AuthFailed(AcpAgentError):
    """``authenticate`` could not sign in; the message says what to do."""

    code = AUTH_REQUIRED


def key_variables(choice: StoredChoice) -> dict[str, str]:
    """The variables that hand ``choice``'s key to its provider: its preset's
    key variable, or for an endpoint of the user's own the custom variable
    with the endpoint's origin bound to it. Empty without a key."""
    if choice.key is None:
        return {}
    preset = PRESETS.get(choice.provider)
    if preset is not None and preset.key_var is not None:
        return {preset.key_var: choice.key}
    variables = {CUSTOM_KEY_VAR: choice.key}
    if choice.base_url:
        variables[KEY_ORIGINS_VAR] = origin_of(choice.base_url)
    return variables


class StoredProvider:
    """The agent's settings, following the stored choice (see the module
    docstring).

    Parameters
    ----------
    settings
        The command line's settings.
    follow
        Whether they leave the provider to the stored choice
        (:func:`~rhema_lsp.providers.stored.follows_stored`).
    path
        The stored choice's file (default: the user's).
    env
        Where a stored key is handed to the provider (default: the process
        environment, where every key comes from).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        follow: bool,
        path: Path | None = None,
        env: MutableMapping[str, str] | None = None,
    ) -> None:
        self.base = self.settings = settings
        self.follow = follow
        self.path = path or choice_path()
        self.env: MutableMapping[str, str] = os.environ if env is None else env
        self._applied: StoredChoice | None = None
        self._ours: dict[str, str] = {}
        self.refresh()

    def refresh(self) -> bool:
        """Read the stored choice again; whether the settings changed."""
        if not self.follow:
            return False
        choice = read_choice(self.path)
        if choice == self._applied:
            return False
        self._applied = choice
        self._hand_keys(choice)
        fields = choice.settings() if choice is not None else {}
        self.settings = self.base.model_copy(
            update={
                "provider": fields.get("provider"),
                "model": self.base.model or fields.get("model"),
                "base_url": fields.get("baseUrl"),
                "protocol": fields.get("protocol"),
            }
        )
        logger.info("provider from the stored choice: %s", fields.get("provider", "none"))
        return True

    def _hand_keys(self, choice: StoredChoice | None) -> None:
        for name, value in self._ours.items():
            if name == KEY_ORIGINS_VAR:
                kept = [o for o in self.env.get(name, "").split() if o != value]
                self.env[name] = " ".join(kept)
            elif self.env.get(name) == value:
                del self.env[name]
        self._ours = {}
        for name, value in (key_variables(choice) if choice is not None else {}).items():
            if name == KEY_ORIGINS_VAR:
                self.env[name] = f"{self.env.get(name, '')} {value}".strip()
            elif self.env.get(name, "").strip():
                continue  # the editor's own key wins
            else:
                self.env[name] = value
            self._ours[name] = value


async def sign_in_locally(
    method_id: str,
    path: Path | None = None,
    servers: tuple[LocalServer, ...] = LOCAL_AUTODETECT,
    probe_s: float = DETECT_TIMEOUT,
) -> StoredChoice:
    """``authenticate``: the Agent Auth method (see the module docstring).

    Raises
    ------
    AuthFailed
        An unknown method, the terminal one (the client runs it), or no
        local server with a model.
    """
    if method_id == SETUP_METHOD:
        raise AuthFailed(
            f"{SETUP_METHOD} is Terminal Auth: run the agent's command with --setup in a terminal"
        )
    if method_id != LOCAL_METHOD:
        raise AuthFailed(f"unknown auth method {method_id!r}: {LOCAL_METHOD} or {SETUP_METHOD}")
    for server, listing in await find_local_servers(servers, probe_s):
        if listing.models:
            choice = StoredChoice(server.preset, listing.models[0], server.base_url)
            await anyio.to_thread.run_sync(write_choice, choice, path or choice_path())
            return choice
    raise AuthFailed(
        f"no model server on this machine lists a model (ports {port_list(servers)}): start "
        f"Ollama, LM Studio or llama.cpp's server with a model, or choose a provider with "
        f"{SETUP_METHOD} (the agent's command with --setup, in a terminal)"
    )
