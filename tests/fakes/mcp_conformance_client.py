"""Our MCP client as MCP's conformance suite drives a client:
``python -m tests.fakes.mcp_conformance_client <server URL>``.

The suite (``@modelcontextprotocol/conformance``, its ``client`` command)
starts a scenario's server, runs this with the server's URL as the last
argument, ``MCP_CONFORMANCE_SCENARIO`` naming the scenario and
``MCP_CONFORMANCE_CONTEXT`` (JSON) giving what a user would have configured
(a pre-registered client's ``client_id``/``client_secret``). It then judges
what the server saw.

This is what a user's ``mcpServers`` entry and editor would do, through the
real :class:`~rhema_lsp.mcp.connection.McpConnection`:

- the entry is ``{"url": ..., "oauth": {...}}`` with the context's client (the
  ``client_credentials`` grant for the ``auth/client-credentials-*``
  scenarios) and the suite's client ID metadata document URL; for cross-app
  access (``auth/cross-app-access-complete-flow``, SEP-990) the context's
  identity provider (token endpoint, client) as ``identityProvider``, the ID
  token and both secrets from the environment (``${...}``) as a user's
  settings give them, and as ``issuer`` the authorization server the
  organisation names (here read from the server's protected resource
  metadata, as an administrator would look it up);
- the sign-in page is "visited" by fetching it, following redirects to our
  loopback listener (the suite's authorization server approves at once);
- every tool the server lists is called once, with arguments made from its
  input schema (a number 1, a string ``"x"``, a boolean ``true``);
- a form elicitation is accepted with the schema's defaults (the editor's
  form, submitted as shown).

Exit 0 when the server got ready and every call was answered, else 1.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx2

from rhema_lsp.mcp.config import McpServerConfig
from rhema_lsp.mcp.connection import McpConnection
from rhema_lsp.mcp.errors import McpError
from rhema_lsp.mcp.host import RunHost
from rhema_lsp.mcp.states import ServerState
from rhema_lsp.tools import MemoryEditor

CIMD_URL = "https://conformance-test.local/client-metadata.json"
"""The client ID metadata document's URL the suite's CIMD scenario expects."""
WAIT_S = 20.0


class FormEditor(MemoryEditor):
    """An editor whose user submits every form as shown (its defaults)."""

    async def fill_form(self, message: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
        fields = schema.get("properties") or {}
        return {name: field["default"] for name, field in fields.items() if "default" in field}


SECRETS = {
    "MCP_SECRET": "client_secret",
    "IDP_SECRET": "idp_client_secret",
    "IDP_ID_TOKEN": "idp_id_token",
}
"""The environment a user's settings take the secrets from: variable, context key."""


def environment(context: Mapping[str, Any]) -> dict[str, str]:
    """The variables of :data:`SECRETS` the context gives."""
    return {name: str(context[key]) for name, key in SECRETS.items() if context.get(key)}


async def issuer_of(url: str) -> str:
    """The authorization server the server at ``url`` names (its protected
    resource metadata, path-based first)."""
    origin = url.split("/", 3)
    base, path = "/".join(origin[:3]), origin[3] if len(origin) > 3 else ""
    async with httpx2.AsyncClient(timeout=10) as http:
        for where in (f"/.well-known/oauth-protected-resource/{path}", ""):
            answer = await http.get(f"{base}{where or '/.well-known/oauth-protected-resource'}")
            if answer.status_code == 200:
                return str(answer.json()["authorization_servers"][0])
    raise RuntimeError("the server names no authorization server")


def cross_app(context: Mapping[str, Any], issuer: str) -> dict[str, Any]:
    """The ``oauth`` of a cross-app access entry (SEP-990)."""
    idp: dict[str, Any] = {
        "tokenEndpoint": context["idp_token_endpoint"],
        "clientId": context["idp_client_id"],
        "idToken": "${IDP_ID_TOKEN}",
    }
    if context.get("idp_client_secret"):
        idp["clientSecret"] = "${IDP_SECRET}"
    return {
        "clientId": context["client_id"],
        "clientSecret": "${MCP_SECRET}",
        "issuer": issuer,
        "identityProvider": idp,
    }


def entry(
    url: str, scenario: str, context: Mapping[str, Any], issuer: str | None = None
) -> McpServerConfig:
    """The ``mcpServers`` entry a user would write for the scenario's server."""
    if context.get("idp_token_endpoint") and issuer is not None:
        return McpServerConfig.model_validate({"url": url, "oauth": cross_app(context, issuer)})
    oauth: dict[str, Any] = {"clientMetadataUrl": CIMD_URL}
    if context.get("client_id"):
        oauth["clientId"] = context["client_id"]
        if context.get("client_secret"):
            oauth["clientSecret"] = context["client_secret"]
        if context.get("private_key_pem"):
            oauth["privateKey"] = context["private_key_pem"]
            oauth["signingAlgorithm"] = context.get("signing_algorithm", "RS256")
        if scenario.startswith("auth/client-credentials"):
            oauth["grant"] = "client_credentials"
    return McpServerConfig.given({"url": url, "oauth": oauth})


def arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: one plain value per property."""
    made = {"number": 1, "integer": 1, "boolean": True, "string": "x"}
    return {
        name: made.get(str(field.get("type")), "x")
        for name, field in (schema.get("properties") or {}).items()
    }


_VISITS: set[asyncio.Task[None]] = set()


async def visit(page: str) -> bool:
    """Open the sign-in page, as a browser does: in the background (the
    loopback listener answers only once this returned)."""
    task = asyncio.create_task(_browse(page))
    _VISITS.add(task)
    task.add_done_callback(_VISITS.discard)
    return True


async def _browse(page: str) -> None:
    """The user at the page: the authorization server approves and redirects
    to our loopback listener."""
    async with httpx2.AsyncClient(follow_redirects=True, timeout=10) as http:
        try:
            await http.get(page)
        except httpx2.HTTPError as exc:
            print(f"the sign-in page failed: {exc!r}", file=sys.stderr)


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    issuer = await issuer_of(url) if context.get("idp_token_endpoint") else None
    with tempfile.TemporaryDirectory() as state:
        connection = McpConnection(
            "conformance",
            entry(url, scenario, context, issuer),
            environ=environment(context),
            placeholders="expand",
            state_dir=Path(state),
        )
        connection.opener = visit
        connection.use(RunHost(FormEditor([Path(state)]), (Path(state),)))
        try:
            connection.start()
            with anyio.move_on_after(WAIT_S):
                await connection.wait_started(sign_in=True)
            if connection.state is not ServerState.READY:
                print(f"not ready: {connection.state.value}: {connection.error}", file=sys.stderr)
                return 1
            for tool in connection.tools:
                try:
                    outcome = await connection.call(tool.name, arguments(tool.input_schema), WAIT_S)
                except McpError as exc:
                    print(f"{tool.name}: {exc}", file=sys.stderr)
                    return 1
                print(f"{tool.name}: {outcome.text}")
            return 0
        finally:
            await connection.aclose()


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
