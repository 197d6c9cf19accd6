"""Cross-app access (SEP-990, Enterprise-Managed Authorization): a server's
token bought with the user's sign-in at the organisation's identity provider,
from an entry's ``oauth.identityProvider``.

Two legs, no page and no registration:

1. :func:`exchange_id_token`: the user's ID token (from the environment)
   goes to the identity provider's token endpoint as an RFC 8693 token
   exchange (``subject_token_type`` ID token, ``requested_token_type``
   ID-JAG, ``audience`` the configured authorization server, ``resource``
   the MCP server), the identity provider's client authenticating with
   ``client_secret_post`` (or its ID alone, a public client); the answer is an
   Identity Assertion Authorization Grant (a signed JWT).
2. the SDK's
   :class:`~mcp.client.auth.extensions.identity_assertion.IdentityAssertionOAuthProvider`
   presents that grant to the configured ``issuer``'s token endpoint (RFC
   7523 jwt-bearer), as the entry's ``clientId``/``clientSecret``, and keeps
   the access token in the server's token file (user state directory).

A fresh grant is asked for each time the server wants a token. The ID
token, the secrets and the grant go only to the two token endpoints: never
to a log, an error message or the store (the stored file holds the access
token alone, as for every server). A refusal is an
:class:`~mcp.client.auth.OAuthTokenError` naming the identity provider's
``error`` code, which the connection reports as a sign-in that did not
complete.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx2
from mcp.client.auth import OAuthTokenError
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

from rhema_lsp.mcp.oauth import FileTokenStorage, token_path
from rhema_lsp.mcp.oauth_entry import McpIdentityProvider, McpOAuth

__all__ = ["ID_JAG", "cross_app_auth", "exchange_id_token"]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
EXCHANGE_TIMEOUT_S = 30.0


async def exchange_id_token(
    idp: McpIdentityProvider,
    id_token: str,
    secret: str | None,
    audience: str,
    resource: str,
    scope: str | None = None,
) -> str:
    """Leg 1: the ID-JAG the identity provider gives for ``id_token``.

    Raises
    ------
    OAuthTokenError
        The identity provider refused or answered something else than an ID-JAG.
    """
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": id_token,
        "subject_token_type": ID_TOKEN,
        "requested_token_type": ID_JAG,
        "audience": audience,
        "resource": resource,
        "client_id": idp.client_id,
    }
    if secret:
        form["client_secret"] = secret
    if scope:
        form["scope"] = scope
    where = f"the identity provider ({idp.token_endpoint})"
    try:
        async with httpx2.AsyncClient(timeout=EXCHANGE_TIMEOUT_S) as http:
            answer = await http.post(idp.token_endpoint, data=form)
    except httpx2.HTTPError as exc:
        raise OAuthTokenError(f"{where} could not be reached: {type(exc).__name__}") from None
    try:
        body = answer.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        body = {}
    if answer.status_code != 200:
        code = str(body.get("error") or "no error code")[:80]
        raise OAuthTokenError(f"{where} refused the token exchange ({answer.status_code}: {code})")
    grant = body.get("access_token")
    if body.get("issued_token_type") != ID_JAG or not isinstance(grant, str) or not grant:
        raise OAuthTokenError(f"{where} did not answer the token exchange with an ID-JAG")
    return grant


def cross_app_auth(
    url: str,
    options: McpOAuth,
    value: Callable[[str, str], str],
    state_dir: Path | None,
) -> IdentityAssertionOAuthProvider:
    """The OAuth client of the server at ``url`` whose entry names an
    ``identityProvider`` (``value`` expands an entry's ``${NAME}``).

    Raises
    ------
    ValueError
        The entry lacks what the SDK's provider needs (checked by the entry already).
    """
    idp = options.identity_provider
    assert idp is not None and options.client_id and options.client_secret and options.issuer
    id_token = value(idp.id_token, "oauth.identityProvider.idToken")
    idp_secret = (
        value(idp.client_secret, "oauth.identityProvider.clientSecret")
        if idp.client_secret
        else None
    )

    def assertion(audience: str, resource: str) -> Awaitable[str]:
        return exchange_id_token(idp, id_token, idp_secret, audience, resource, options.scope)

    return IdentityAssertionOAuthProvider(
        url,
        FileTokenStorage(token_path(url, state_dir)),
        options.client_id,
        value(options.client_secret, "oauth.clientSecret"),
        options.issuer,
        assertion,
        scope=options.scope,
        token_endpoint_auth_method=options.token_auth,
    )
