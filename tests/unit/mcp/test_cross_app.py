"""Cross-app access (SEP-990) from an entry's ``oauth.identityProvider``, in
process: the entry's rules (secrets from the environment, an ``issuer``, no
client-credentials grant), the provider an entry gets, and leg 1 (the RFC
8693 token exchange) against an identity provider on loopback that answers
as told: the ID-JAG taken; a refusal, a page that is not JSON, a token of
another type and an unreachable provider each an error that names neither
the ID token nor a secret. (Leg 2 and the whole flow: the conformance
suite's ``auth/cross-app-access-complete-flow``, tests/e2e.)"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from mcp.client.auth import OAuthTokenError
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

from rhema_lsp.mcp.config import McpServerConfig, parse_servers
from rhema_lsp.mcp.cross_app import ID_JAG, exchange_id_token
from rhema_lsp.mcp.oauth_clients import auth_for
from rhema_lsp.mcp.oauth_entry import McpIdentityProvider
from rhema_lsp.mcp.transports import placeholder_value

ID_TOKEN = "eyJ.the-users-id-token.sig"
SECRET = "idp-s3cret"
IDP = {"tokenEndpoint": "https://idp.example/token", "clientId": "rhema-idp"}
GIVEN = {**IDP, "clientSecret": "${IDP_SECRET}", "idToken": "${IDP_ID_TOKEN}"}
ENTRY: dict[str, Any] = {
    "clientId": "rhema",
    "clientSecret": "${MCP_SECRET}",
    "issuer": "https://auth.example",
    "identityProvider": GIVEN,
}


class Provider:
    """An identity provider's token endpoint answering ``reply`` (status, body)."""

    def __init__(self) -> None:
        self.reply: tuple[int, bytes] = (200, b"{}")
        self.forms: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                outer.forms.append({k: v[0] for k, v in parse_qs(body).items()})
                status, answer = outer.reply
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/token"


@pytest.fixture
def provider() -> Iterator[Provider]:
    made = Provider()
    thread = threading.Thread(target=made.server.serve_forever, daemon=True)
    thread.start()
    yield made
    made.server.shutdown()
    made.server.server_close()


def idp(url: str) -> McpIdentityProvider:
    return McpIdentityProvider.model_validate({**IDP, "tokenEndpoint": url, "idToken": "x"})


async def exchange(url: str) -> str:
    return await exchange_id_token(
        idp(url), ID_TOKEN, SECRET, "https://auth.example", "https://mcp.example/mcp", "a b"
    )


async def test_the_id_token_is_exchanged_for_an_id_jag(provider: Provider) -> None:
    provider.reply = (
        200,
        json.dumps({"access_token": "jag", "issued_token_type": ID_JAG}).encode(),
    )
    assert await exchange(provider.url) == "jag"
    [form] = provider.forms
    assert form == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": ID_TOKEN,
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "requested_token_type": ID_JAG,
        "audience": "https://auth.example",
        "resource": "https://mcp.example/mcp",
        "client_id": "rhema-idp",
        "client_secret": SECRET,
        "scope": "a b",
    }


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (400, {"error": "invalid_grant", "error_description": f"bad {ID_TOKEN} {SECRET}"},
         "refused the token exchange (400: invalid_grant)"),
        (500, "<html>down</html>", "(500: no error code)"),
        (200, {"access_token": "t", "issued_token_type": "urn:x:access_token"}, "with an ID-JAG"),
        (200, ["not", "an", "object"], "with an ID-JAG"),
    ],
)  # fmt: skip
async def test_a_refusal_or_an_odd_answer_is_an_error_without_secrets(
    provider: Provider, status: int, body: object, message: str
) -> None:
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    provider.reply = (status, raw)
    with pytest.raises(OAuthTokenError) as caught:
        await exchange(provider.url)
    assert message in str(caught.value)
    assert ID_TOKEN not in str(caught.value) and SECRET not in str(caught.value)


async def test_an_unreachable_provider_is_an_error(provider: Provider) -> None:
    url = provider.url
    provider.server.shutdown()
    provider.server.server_close()
    with pytest.raises(OAuthTokenError, match="could not be reached"):
        await exchange(url)


@pytest.mark.parametrize(
    ("oauth", "message"),
    [
        ({**ENTRY, "identityProvider": {**GIVEN, "idToken": ID_TOKEN}},
         "environment"),  # a literal ID token in a settings file
        ({k: v for k, v in ENTRY.items() if k != "issuer"}, "issuer"),
        ({k: v for k, v in ENTRY.items() if k != "clientSecret"}, "clientSecret"),
        ({**ENTRY, "grant": "client_credentials"}, "client_credentials"),
        ({**ENTRY, "identityProvider": {**GIVEN,
                                        "tokenEndpoint": "file:///etc/passwd"}}, "http(s)://"),
        ({**ENTRY, "identityProvider": {"clientId": "c"}}, "tokenEndpoint"),
    ],
)  # fmt: skip
def test_a_bad_cross_app_entry_is_refused(oauth: dict[str, Any], message: str) -> None:
    servers, problems = parse_servers({"corp": {"url": "https://mcp.example/mcp", "oauth": oauth}})
    assert servers == {} and message in str(problems[0])


async def test_the_entry_gets_the_sdks_identity_assertion_provider(tmp_path: Path) -> None:
    servers, problems = parse_servers({"corp": {"url": "https://mcp.example/mcp", "oauth": ENTRY}})
    assert problems == []
    environ = {"MCP_SECRET": "m", "IDP_SECRET": SECRET, "IDP_ID_TOKEN": ID_TOKEN}
    config: McpServerConfig = servers["corp"]

    async def never(page: str) -> None:
        raise AssertionError(page)

    value = placeholder_value("corp", "expand", environ)
    auth = await auth_for("corp", "https://mcp.example/mcp", config.oauth, never, value, tmp_path)
    assert isinstance(auth, IdentityAssertionOAuthProvider)
    assert not (tmp_path / "mcp-oauth").exists()  # nothing stored before a token is bought
