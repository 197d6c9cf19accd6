"""Which OAuth client an HTTP server gets, from its entry's ``oauth``.

- No ``oauth``: the sign-in of :func:`~rhema_lsp.mcp.oauth.oauth_for` with
  dynamic client registration.
- ``grant: client_credentials``: the SDK's
  :class:`~mcp.client.auth.extensions.client_credentials.ClientCredentialsOAuthProvider`
  (machine to machine: no page, no user; the token is bought with the
  client's ID and secret, at the token endpoint the server's metadata names);
  with ``privateKey``, the SDK's ``PrivateKeyJWTOAuthProvider`` (the client
  proves itself with a JWT it signs, ``private_key_jwt``).
- ``identityProvider`` (cross-app access, SEP-990): :mod:`rhema_lsp.mcp.cross_app`
  (the user's ID token exchanged at the identity provider, the grant
  presented to the configured ``issuer``; no page).
- Otherwise the browser sign-in, with the pre-registered client
  (``clientId``/``clientSecret``) instead of a registration, the ``scopes``
  asked for, and ``clientMetadataUrl`` as the client ID where the
  authorization server takes client ID metadata documents.

The secret is expanded here (``value``: the connection's policy for
``${NAME}``), at start, and goes only to the SDK's provider. A refused entry
(a bad metadata URL the SDK rejects) is
:class:`~rhema_lsp.mcp.errors.McpUnstartable`.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx2
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.shared.exceptions import MCPDeprecationWarning

from rhema_lsp.mcp.cross_app import cross_app_auth
from rhema_lsp.mcp.errors import McpUnstartable
from rhema_lsp.mcp.oauth import FileTokenStorage, PreRegistered, oauth_for, token_path
from rhema_lsp.mcp.oauth_entry import McpOAuth

__all__ = ["auth_for"]


async def auth_for(
    name: str,
    url: str,
    options: McpOAuth | None,
    authorize: Callable[[str], Awaitable[None]],
    value: Callable[[str, str], str],
    state_dir: Path | None,
) -> httpx2.Auth:
    """The OAuth client of server ``name`` at ``url`` (see the module docstring).

    Raises
    ------
    McpUnstartable
        The secret's variable is not set, or the SDK refused the entry.
    """
    if options is None:
        return await oauth_for(url, authorize, state_dir=state_dir)
    secret = value(options.client_secret, "oauth.clientSecret") if options.client_secret else None
    try:
        if options.identity_provider is not None:
            return cross_app_auth(url, options, value, state_dir)
        if options.private_key is not None:
            assert options.client_id is not None  # the entry checked
            signed = SignedJWTParameters(
                issuer=options.client_id,
                subject=options.client_id,
                signing_key=value(options.private_key, "oauth.privateKey"),
                signing_algorithm=options.signing_algorithm,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                return PrivateKeyJWTOAuthProvider(
                    url,
                    FileTokenStorage(token_path(url, state_dir)),
                    options.client_id,
                    signed.create_assertion_provider(),
                    scope=options.scope,
                    issuer=options.issuer,
                )
        if options.grant == "client_credentials":
            assert options.client_id is not None and secret is not None  # the entry checked
            with warnings.catch_warnings():  # no issuer: whichever discovery finds
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                return ClientCredentialsOAuthProvider(
                    url,
                    FileTokenStorage(token_path(url, state_dir)),
                    options.client_id,
                    secret,
                    token_endpoint_auth_method=options.token_auth,
                    scope=options.scope,
                    issuer=options.issuer,
                )
        client = (
            PreRegistered(options.client_id, secret, options.token_auth)
            if options.client_id
            else None
        )
        return await oauth_for(
            url,
            authorize,
            state_dir=state_dir,
            client=client,
            scope=options.scope,
            client_metadata_url=options.client_metadata_url,
        )
    except ValueError as exc:
        raise McpUnstartable(f"MCP server {name}: its `oauth` entry is refused: {exc}") from None
