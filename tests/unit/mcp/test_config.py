"""``mcpServers`` entries: the common shape, secrets only from the
environment, and a bad entry named without losing the good ones."""

from __future__ import annotations

import pytest

from rhema_lsp.mcp import McpServerConfig, McpUnavailable, parse_servers
from rhema_lsp.mcp.config import expand_env
from rhema_lsp.runs.settings import parse_settings


def test_the_common_shapes_parse() -> None:
    servers, problems = parse_servers(
        {
            "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
            "remote": {"type": "http", "url": "https://mcp.example.com/mcp"},
            "cline": {"command": "x", "autoApprove": ["read"], "safe": ["read"]},
        }
    )
    assert problems == []
    assert servers["time"].transport == "stdio"
    assert servers["remote"].transport == "http"
    assert servers["cline"].allows("read") and not servers["cline"].allows("write")
    assert servers["cline"].is_safe("read")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"url": "http://h/mcp", "headers": {"Authorization": "Bearer ghp_x"}}, "environment"),
        ({"type": "sse", "url": "http://h/sse"}, "SSE"),
        ({"command": "x", "url": "http://h"}, "not both"),
        ({}, "command"),
        ({"url": "file:///x"}, "http://"),
        ({"url": "https://h", "oauth": {"clientId": "c", "clientSecret": "s3cret"}}, "environment"),
        ({"url": "https://h", "oauth": {"grant": "client_credentials", "clientId": "c"}},
         "clientSecret"),
        ({"url": "https://h", "oauth": {"clientSecret": "${S}"}}, "clientId"),
        ({"url": "https://h", "oauth": {"grant": "client_credentials", "clientId": "c",
                                        "privateKey": "-----BEGIN KEY-----"}}, "environment"),
        ({"url": "https://h", "oauth": {"clientId": "c", "privateKey": "${K}"}},
         "client_credentials"),
        ({"url": "https://h", "oauth": {"clientMetadataUrl": "http://h/c.json"}}, "https://"),
        ({"url": "https://h", "oauth": {"grant": "password"}}, "grant"),
        ({"command": "x", "oauth": {"clientId": "c"}}, "HTTP server"),
    ],
)  # fmt: skip
def test_a_bad_entry_is_named_and_the_others_kept(entry: dict[str, object], message: str) -> None:
    settings, problems = parse_settings({"mcpServers": {"good": {"command": "x"}, "bad": entry}})
    assert list(settings.mcp_servers) == ["good"]
    assert [p.field for p in problems] == ["mcpServers.bad"]
    assert message in str(problems[0])
    assert "not used" in str(problems[0])


def test_headers_and_env_expand_from_the_environment_only() -> None:
    config = McpServerConfig(url="http://h", headers={"Authorization": "Bearer ${env:TOKEN}"})
    value = config.headers["Authorization"]
    assert expand_env(value, {"TOKEN": "t0k"}, what="header") == "Bearer t0k"
    with pytest.raises(McpUnavailable, match=r"\$\{TOKEN\}") as caught:
        expand_env(value, {}, what="header")
    assert "t0k" not in str(caught.value)


def test_modes_default_to_agent() -> None:
    settings, _ = parse_settings({})
    assert settings.mcp_modes == ("agent",)
    assert settings.mcp_servers == {}


def test_a_server_a_client_passes_may_carry_literal_header_values() -> None:
    entry = {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ghp_x"}}
    with pytest.raises(ValueError, match="environment"):
        McpServerConfig.model_validate(entry)
    given = McpServerConfig.given(entry)
    assert given.headers == {"Authorization": "Bearer ghp_x"}
    with pytest.raises(ValueError, match="SSE"):
        McpServerConfig.given({"type": "sse", "url": "https://h/sse"})


def test_an_organisations_oauth_client_is_read_from_the_entry() -> None:
    servers, problems = parse_servers(
        {
            "corp": {
                "url": "https://mcp.corp.example/mcp",
                "oauth": {
                    "clientId": "rhema",
                    "clientSecret": "${CORP_SECRET}",
                    "scopes": ["files:read", "files:write"],
                    "grant": "client_credentials",
                    "tokenAuth": "client_secret_post",
                },
            },
            "cimd": {
                "url": "https://mcp.example/mcp",
                "oauth": {"clientMetadataUrl": "https://corp.example/rhema.json"},
            },
        }
    )
    assert problems == []
    oauth = servers["corp"].oauth
    assert oauth is not None and oauth.client_id == "rhema"
    assert (oauth.grant, oauth.token_auth) == ("client_credentials", "client_secret_post")
    assert oauth.scope == "files:read files:write"
    cimd = servers["cimd"].oauth
    assert cimd is not None and cimd.client_id is None and cimd.scope is None
    # a client passing its servers (ACP) may give the secret itself
    given = McpServerConfig.given(
        {"url": "https://h", "oauth": {"clientId": "c", "clientSecret": "s"}}
    )
    assert given.oauth is not None and given.oauth.client_secret == "s"
