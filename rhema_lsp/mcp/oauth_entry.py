"""The ``oauth`` part of an HTTP server's entry: how rhema-lsp is known to
the server's authorization server, when dynamic registration is not the way.

An organisation's server often has no dynamic client registration; its
entry then says who the client is::

    "oauth": {"clientId": "rhema", "clientSecret": "${CORP_MCP_SECRET}",
              "scopes": ["files:read"], "grant": "client_credentials"}

- ``clientId`` (and ``clientSecret``, for a confidential client): a client
  registered beforehand; the sign-in uses it instead of registering one.
- ``grant``: ``authorization_code`` (the default: the user signs in in the
  browser) or ``client_credentials`` (machine to machine: no user, the
  client's own credentials buy the token; needs ``clientId`` and
  ``clientSecret``, or ``privateKey``).
- ``privateKey`` (PEM) and ``signingAlgorithm`` (default ``RS256``): the
  client authenticates with a signed JWT (``private_key_jwt``) instead of a
  secret (the client-credentials grant only).
- ``scopes``: what to ask for (else what the server names).
- ``clientMetadataUrl``: an HTTPS URL where the organisation publishes a
  client ID metadata document (CIMD); used as the client ID when the
  authorization server advertises ``client_id_metadata_document_supported``.
- ``tokenAuth``: how a secret reaches the token endpoint
  (``client_secret_basic``, the default, or ``client_secret_post``).
- ``issuer``: the authorization server the credentials belong to (a token is
  then only asked of that one).
- ``identityProvider``: cross-app access (SEP-990, Enterprise-Managed
  Authorization): the user's sign-in at the organisation's identity provider
  buys the server's token, no page. ``{"tokenEndpoint": ..., "clientId": ...,
  "clientSecret": "${IDP_SECRET}", "idToken": "${IDP_ID_TOKEN}"}``: the ID
  token is exchanged there (RFC 8693) for an identity assertion grant
  (ID-JAG), which ``clientId``/``clientSecret`` present to ``issuer`` (needed:
  the authorization server is configuration, never asked of the server).

Like a header, ``clientSecret``, ``privateKey`` and the identity provider's
``clientSecret`` and ``idToken`` must come from the environment
(``${NAME}``) in a settings file; a client passing its servers (ACP) may
give it literally. It is expanded when the server starts, never logged.
Light to import (pydantic only).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["McpIdentityProvider", "McpOAuth"]


class McpIdentityProvider(BaseModel):
    """An entry's ``oauth.identityProvider`` (cross-app access, SEP-990)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    token_endpoint: str = Field(alias="tokenEndpoint", min_length=8)
    client_id: str = Field(alias="clientId", min_length=1)
    client_secret: str | None = Field(default=None, alias="clientSecret", min_length=1)
    id_token: str = Field(alias="idToken", min_length=1)

    @model_validator(mode="after")
    def _web(self) -> McpIdentityProvider:
        if not self.token_endpoint.startswith(("https://", "http://")):
            raise ValueError("`identityProvider.tokenEndpoint` must be an http(s):// URL")
        return self


class McpOAuth(BaseModel):
    """An entry's ``oauth`` (see the module docstring)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    client_id: str | None = Field(default=None, alias="clientId", min_length=1)
    client_secret: str | None = Field(default=None, alias="clientSecret", min_length=1)
    scopes: tuple[str, ...] = ()
    grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    client_metadata_url: str | None = Field(default=None, alias="clientMetadataUrl")
    token_auth: Literal["client_secret_basic", "client_secret_post"] = Field(
        default="client_secret_basic", alias="tokenAuth"
    )
    issuer: str | None = None
    private_key: str | None = Field(default=None, alias="privateKey", min_length=1)
    signing_algorithm: str = Field(default="RS256", alias="signingAlgorithm", min_length=2)
    identity_provider: McpIdentityProvider | None = Field(default=None, alias="identityProvider")

    @model_validator(mode="after")
    def _complete(self) -> McpOAuth:
        credential = self.client_secret or self.private_key
        if self.grant == "client_credentials" and not (self.client_id and credential):
            raise ValueError(
                "the client_credentials grant needs `clientId` and `clientSecret` (or `privateKey`)"
            )
        if self.private_key and self.grant != "client_credentials":
            raise ValueError("`privateKey` is for the client_credentials grant")
        if self.client_secret and not self.client_id:
            raise ValueError("`clientSecret` needs the `clientId` it belongs to")
        if self.identity_provider is not None and not (
            self.client_id and self.client_secret and self.issuer
        ):
            raise ValueError(
                "`identityProvider` needs `clientId`, `clientSecret` and `issuer` "
                "(the authorization server the identity assertion goes to)"
            )
        if self.identity_provider is not None and self.grant == "client_credentials":
            raise ValueError("`identityProvider` excludes the client_credentials grant")
        url = self.client_metadata_url
        if url is not None and (not url.startswith("https://") or url.count("/") < 3):
            raise ValueError("`clientMetadataUrl` must be an https:// URL with a path")
        return self

    def secrets(self) -> list[tuple[str, str]]:
        """``(field, value)`` of the values that must come from the environment."""
        idp = self.identity_provider
        named = (
            ("clientSecret", self.client_secret),
            ("privateKey", self.private_key),
            ("identityProvider.clientSecret", idp.client_secret if idp else None),
            ("identityProvider.idToken", idp.id_token if idp else None),
        )
        return [(what, value) for what, value in named if value]

    @property
    def scope(self) -> str | None:
        """The scopes as OAuth writes them (space-separated), or ``None``."""
        return " ".join(self.scopes) or None
