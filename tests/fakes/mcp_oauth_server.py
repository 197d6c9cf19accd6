"""An OAuth-protected MCP server with its own authorization server, on loopback.

``python -m tests.fakes.mcp_oauth_server PORT`` serves, on
``127.0.0.1:PORT``: the MCP endpoint ``/mcp`` (401 with ``WWW-Authenticate``
without a valid bearer token), its protected resource metadata, and an
authorization server written with the SDK (metadata, dynamic registration,
``/authorize``, ``/token`` with PKCE, refresh). ``/authorize`` approves at
once: it redirects to the client's ``redirect_uri`` with a code, as a
browser would after the user signed in — unless the client's name is in
``$FAKE_OAUTH_REFUSE``, then it redirects with ``error=access_denied``.
Tools: ``secret`` (says who is signed in). Each token issued appends a line
to ``$FAKE_MCP_MARKS/tokens``.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from pathlib import Path

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl

MARKS = Path(os.environ.get("FAKE_MCP_MARKS", "."))


class Provider:
    """An authorization server that remembers everything in memory."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        if client.client_name in os.environ.get("FAKE_OAUTH_REFUSE", "").split(","):
            return construct_redirect_uri(
                str(params.redirect_uri), error="access_denied", state=params.state
            )
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(authorization_code.client_id, authorization_code.scopes)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: object
    ) -> OAuthToken:
        raise NotImplementedError("identity assertions are not served here")

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        with (MARKS / "tokens").open("a") as handle:
            handle.write(f"{client_id}\n")
        return OAuthToken(
            access_token=access, expires_in=3600, refresh_token=refresh, scope=" ".join(scopes)
        )


def build(port: int) -> MCPServer:
    base = f"http://127.0.0.1:{port}"
    app = MCPServer(
        "fake-oauth-mcp",
        auth_server_provider=Provider(),
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(base),
            resource_server_url=AnyHttpUrl(f"{base}/mcp"),
            client_registration_options=ClientRegistrationOptions(enabled=True),
            validate_token_resource=False,
        ),
    )

    @app.tool(description="Who is signed in.")
    def secret() -> str:
        return "signed in: the protected tool answered"

    return app


def main() -> None:
    port = int(sys.argv[1])
    build(port).run("streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
