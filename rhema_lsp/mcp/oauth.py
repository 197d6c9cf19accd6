"""OAuth 2.1 for HTTP servers that answer 401: the SDK's client, our storage
and our loopback redirect.

:func:`oauth_for` builds the SDK's :class:`~mcp.client.auth.OAuthClientProvider`
(an ``httpx2.Auth``), which does the protocol: protected resource and
authorization server discovery, dynamic client registration, PKCE, the code
exchange and refreshes. A server that never answers 401 never sees it.

- Tokens and the registered client live in the **user state directory**
  (``<user state dir>/rhema-lsp/mcp-oauth/<hash of the URL>.json``, the
  folder ``0700``, the file ``0600``, written atomically), never in the
  workspace, never in a log or an error message.
- The redirect is loopback: ``http://127.0.0.1:PORT/callback``, the port
  chosen once per server and kept with its registration. The listener opens
  before the user is sent to the authorization page and closes after the
  first answer (or :data:`SIGN_IN_WAIT_S`).
- A client registered beforehand (:class:`PreRegistered`, from the entry's
  ``oauth``) is used as it is: no registration, never stored (its secret
  stays in the environment). Requested scopes and a client ID metadata
  document's URL pass through to the SDK.
- The page is opened by ``authorize(url)``, which the connection supplies
  (the editor's ``window/showDocument``; the headless client prints it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
import anyio.to_thread
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from platformdirs import user_state_dir
from pydantic import AnyUrl, ValidationError

from rhema_lsp import __version__
from rhema_lsp.mcp.config import SIGN_IN_WAIT_S

__all__ = ["FileTokenStorage", "PreRegistered", "oauth_for", "token_path"]

logger = logging.getLogger(__name__)

_PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"Signed in: you can close this tab and go back to the editor.\n"
)
_REFUSED = (
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\nThe sign-in did not complete: "
)


def token_path(url: str, state_dir: Path | None = None) -> Path:
    """Where the tokens of the server at ``url`` are kept."""
    folder = state_dir or Path(user_state_dir("rhema-lsp", appauthor=False))
    digest = hashlib.sha256(url.encode()).hexdigest()[:32]
    return folder / "mcp-oauth" / f"{digest}.json"


class FileTokenStorage:
    """The SDK's ``TokenStorage`` in one owner-only JSON file per server."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fixed: OAuthClientInformationFull | None = None
        """A client registered beforehand: the one registration, never stored."""

    def _read(self) -> dict[str, object]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            logger.warning("ignoring the unreadable OAuth record %s: %s", self.path, exc)
            return {}
        return raw if isinstance(raw, dict) else {}

    def _write(self, key: str, value: dict[str, object]) -> None:
        record = self._read()
        record[key] = value
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        fd, temporary = tempfile.mkstemp(prefix=".oauth-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(record, handle)
            os.replace(temporary, self.path)
        except BaseException:
            os.unlink(temporary)
            raise

    async def _get(self, key: str) -> dict[str, object] | None:
        value = (await anyio.to_thread.run_sync(self._read)).get(key)
        return value if isinstance(value, dict) else None

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, if any."""
        raw = await self._get("tokens")
        try:
            return OAuthToken.model_validate(raw) if raw else None
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Keep ``tokens``."""
        dumped = tokens.model_dump(mode="json", exclude_none=True)
        await anyio.to_thread.run_sync(self._write, "tokens", dumped)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The client registered beforehand, else the stored registration, if any."""
        if self.fixed is not None:
            return self.fixed
        raw = await self._get("client")
        try:
            return OAuthClientInformationFull.model_validate(raw) if raw else None
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep the client registration (not one registered beforehand: its
        secret stays in the environment)."""
        if self.fixed is not None:
            return
        dumped = client_info.model_dump(mode="json", exclude_none=True)
        await anyio.to_thread.run_sync(self._write, "client", dumped)


async def oauth_for(
    url: str,
    authorize: Callable[[str], Awaitable[None]],
    *,
    state_dir: Path | None = None,
    client: PreRegistered | None = None,
    scope: str | None = None,
    client_metadata_url: str | None = None,
) -> OAuthClientProvider:
    """The OAuth client of the server at ``url`` (see the module docstring).

    Parameters
    ----------
    authorize
        Sends the user to the authorization page (called with its URL once
        the loopback listener is open).
    state_dir
        The user state directory (tests use a temporary one).
    client
        A client registered beforehand (its ID and secret): no dynamic
        registration (:mod:`rhema_lsp.mcp.oauth_clients`).
    scope
        The scopes to ask for, space-separated (else the server's).
    client_metadata_url
        The client ID metadata document's URL, the client ID where the
        authorization server takes one.
    """
    storage = FileTokenStorage(token_path(url, state_dir))
    registered = await storage.get_client_info()
    port = _registered_port(registered) or _free_port()
    redirect = f"http://127.0.0.1:{port}/callback"
    listener: list[anyio.abc.Listener[anyio.abc.SocketStream]] = []

    async def redirect_handler(page: str) -> None:
        opened = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
        listener.append(opened)
        await authorize(page)

    async def callback_handler() -> AuthorizationCodeResult:
        if not listener:
            raise OAuthFlowError("the loopback listener is not open")
        try:
            with anyio.fail_after(SIGN_IN_WAIT_S):
                return await _first_redirect(listener[0])
        except TimeoutError as exc:
            raise OAuthFlowError(
                f"nobody signed in within {SIGN_IN_WAIT_S:g} s: restart the server to try again"
            ) from exc
        finally:
            await listener.pop().aclose()

    metadata = OAuthClientMetadata(
        client_name="rhema-lsp",
        software_id="rhema-lsp",
        software_version=__version__,
        redirect_uris=[AnyUrl(redirect)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=scope,
    )
    if client is not None:
        storage.fixed = OAuthClientInformationFull(
            client_id=client.client_id,
            client_secret=client.secret,
            redirect_uris=[AnyUrl(redirect)],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method=client.token_auth if client.secret else "none",
            scope=scope,
        )
    return OAuthClientProvider(
        url,
        metadata,
        storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )


@dataclass(frozen=True, slots=True)
class PreRegistered:
    """A client registered beforehand with the authorization server."""

    client_id: str
    secret: str | None
    token_auth: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"


def _registered_port(client: OAuthClientInformationFull | None) -> int | None:
    for uri in (client.redirect_uris or []) if client else []:
        parts = urlsplit(str(uri))
        if parts.hostname == "127.0.0.1" and parts.port:
            return parts.port
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _first_redirect(
    listener: anyio.abc.Listener[anyio.abc.SocketStream],
) -> AuthorizationCodeResult:
    """Serve the loopback listener until a request to ``/callback`` carries
    a code or an error; answer the browser a short page."""
    sockets = getattr(listener, "listeners", [listener])
    while True:
        async with await sockets[0].accept() as stream:
            try:
                request = await _request_line(stream)
            except (TimeoutError, anyio.EndOfStream, OSError, anyio.BrokenResourceError):
                continue  # not a browser's request: wait for the next
            parts = urlsplit(request)
            if parts.path != "/callback":
                await stream.send(b"HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n")
                continue
            query = {key: values[0] for key, values in parse_qs(parts.query).items()}
            if "code" in query:
                await stream.send(_PAGE)
                return AuthorizationCodeResult(
                    code=query["code"], state=query.get("state"), iss=query.get("iss")
                )
            error = query.get("error_description") or query.get("error") or "no code"
            await stream.send(_REFUSED + error.encode()[:200] + b"\n")
            raise OAuthFlowError(f"the authorization server refused: {error[:200]}")


async def _request_line(stream: anyio.abc.SocketStream) -> str:
    """The target of an HTTP request (its first line), reading at most 8 KiB."""
    data = b""
    with anyio.fail_after(10):
        while b"\r\n" not in data and len(data) < 8192:
            data += await stream.receive(4096)
    line = data.split(b"\r\n", 1)[0].decode("latin-1")
    method, _, rest = line.partition(" ")
    return rest.rpartition(" ")[0] if method == "GET" else ""
