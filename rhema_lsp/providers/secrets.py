"""Key safety: where a key may go, and a holder that never shows it.

A key is read from the server's environment only and is bound to an origin
(``scheme://host:port``): its preset's own, or one the user listed in
``RHEMA_KEY_ORIGINS``. Plain ``http://`` is accepted for loopback hosts only.
:class:`Secret` keeps the key out of every ``repr`` and ``str``; a logging
filter on the HTTP libraries' loggers (httpcore logs response headers at
DEBUG, and a hostile server can echo a key in them) scrubs every live key
from their records.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Mapping
from urllib.parse import urlsplit

from rhema_lsp.providers.errors import ProviderConfigError

__all__ = [
    "KEY_ORIGINS_VAR",
    "RedactSecrets",
    "Secret",
    "allowed_key_origins",
    "check_base_url",
    "origin_of",
]

KEY_ORIGINS_VAR = "RHEMA_KEY_ORIGINS"
"""Environment variable: comma- or space-separated origins a key may be sent to."""

_DEFAULT_PORTS = {"http": 80, "https": 443}


_live_secrets: set[str] = set()

_FILTERED_LOGGERS = (
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
    "rhema_lsp",
    "rhema_lsp.providers",
)


class RedactSecrets(logging.Filter):
    """Replaces every live key in a log record's message with ``[redacted]``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not _live_secrets:
            return True
        message = record.getMessage()
        scrubbed = message
        for secret in _live_secrets:
            scrubbed = scrubbed.replace(secret, "[redacted]")
        if scrubbed is not message and scrubbed != message:
            record.msg = scrubbed
            record.args = None
        return True


_filter = RedactSecrets()
for _name in _FILTERED_LOGGERS:
    logging.getLogger(_name).addFilter(_filter)


class Secret:
    """An API key that never appears in a ``repr`` or ``str``, nor in the HTTP
    libraries' log records once it exists."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        if value:
            _live_secrets.add(value)

    def reveal(self) -> str:
        """The key itself, for the one header that carries it."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('[redacted]')"

    __str__ = __repr__


def origin_of(url: str) -> str:
    """The normalised origin ``scheme://host:port`` of ``url`` (default ports filled in)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    except ValueError as exc:
        raise ProviderConfigError(f"baseUrl {url!r} has an invalid port") from exc
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_base_url(url: str, *, setting: str = "rhema.baseUrl") -> str:
    """Validate a base URL and return it without a trailing slash.

    ``setting`` is how the user names the base URL (``--base-url`` on the
    command line); messages use it.

    Raises
    ------
    ProviderConfigError
        For anything but ``https://``, or ``http://`` to a loopback host.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ProviderConfigError(
            f"{setting} {url!r} is not an http(s) URL: use e.g. https://host/v1 "
            "(or http://127.0.0.1:PORT/v1 for a local server)"
        )
    if scheme == "http" and not is_loopback(parts.hostname):
        raise ProviderConfigError(
            f"{setting} {url!r} uses plain http:// to a host that is not this machine; "
            "use https:// (plain http is allowed only for localhost / 127.0.0.1 / ::1)"
        )
    if parts.username or parts.password:
        raise ProviderConfigError(
            f"{setting} must not embed credentials; put keys in the environment"
        )
    return url.strip().rstrip("/")


def allowed_key_origins(env: Mapping[str, str]) -> frozenset[str]:
    """The origins listed in ``RHEMA_KEY_ORIGINS``, normalised."""
    raw = env.get(KEY_ORIGINS_VAR, "")
    entries = [entry for entry in raw.replace(",", " ").split() if entry]
    return frozenset(origin_of(entry) for entry in entries)
