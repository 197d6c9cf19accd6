"""Key safety: where a key may go, a holder that never shows it, and the
last check that no key rides in a request body.

A key is read from the server's environment only and is bound to an origin
(``scheme://host:port``): its preset's own, or one the user listed in
``RHEMA_KEY_ORIGINS``. Plain ``http://`` is accepted for loopback hosts only.
:class:`Secret` keeps the key out of every ``repr`` and ``str``; a logging
filter on the HTTP libraries' loggers (httpcore logs response headers at
DEBUG, and a hostile server can echo a key in them) scrubs every live key
from their records.

:class:`KeyGuard` is the last check before a body leaves on any wire: the
values of the server's own key variables (:data:`SERVER_KEY_VARS`) that made
their way into a message, a tool result or the system prompt are replaced by
``[redacted NAME]``, and one warning names the variable, never the value.
Values shorter than :data:`MIN_GUARDED_LENGTH` are not searched (they would
match ordinary text). The needles are built once per provider; a body is
searched with ``bytes``' own substring search, one needle after another (about
0.1 ms per MiB each, where one regular-expression alternation of the same
needles takes 10 ms per MiB, longer than encoding the body).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from urllib.parse import urlsplit

from rhema_lsp.providers.errors import ProviderConfigError
from rhema_lsp.providers.known import is_loopback
from rhema_lsp.providers.presets import CUSTOM_KEY_VAR, PRESETS

__all__ = [
    "KEY_ORIGINS_VAR",
    "MIN_GUARDED_LENGTH",
    "SERVER_KEY_VARS",
    "KeyGuard",
    "RedactSecrets",
    "Secret",
    "allowed_key_origins",
    "check_base_url",
    "origin_of",
]

logger = logging.getLogger("rhema_lsp.providers")

SERVER_KEY_VARS = (
    *(preset.key_var for preset in PRESETS.values() if preset.key_var is not None),
    CUSTOM_KEY_VAR,
)
"""The server's own key variables: each keyed preset's, and ``RHEMA_API_KEY``."""

MIN_GUARDED_LENGTH = 8
"""Key values shorter than this are not searched for in request bodies."""

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
        # A value too short to be a real key (a test's "k") would turn every
        # such letter of every log line into "[redacted]".
        if len(value) >= MIN_GUARDED_LENGTH:
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


class KeyGuard:
    """Finds the server's keys in a request body and replaces them (see the
    module docstring). One guard per provider; it warns once per variable."""

    __slots__ = ("_needles", "_warned")

    def __init__(self, keys: Mapping[str, str]) -> None:
        needles: dict[bytes, str] = {}
        for name, value in keys.items():
            if len(value) < MIN_GUARDED_LENGTH:
                continue
            # How the value reads inside a JSON string of the body (json.dumps,
            # ensure_ascii=False), which is the raw value for any usual key.
            needles.setdefault(json.dumps(value, ensure_ascii=False)[1:-1].encode("utf-8"), name)
        # Longest first: a key that contains another is replaced whole.
        self._needles = sorted(needles.items(), key=lambda item: -len(item[0]))
        self._warned: set[str] = set()

    @classmethod
    def from_env(cls, env: Mapping[str, str], own: Secret | None = None) -> KeyGuard:
        """The guard of every :data:`SERVER_KEY_VARS` value in ``env``, and of
        the provider's own key ``own`` (wherever it came from)."""
        keys = {name: env[name].strip() for name in SERVER_KEY_VARS if env.get(name, "").strip()}
        if own is not None and own.reveal() and own.reveal() not in keys.values():
            keys["the provider's key"] = own.reveal()
        return cls(keys)

    @property
    def guarded(self) -> list[str]:
        """The names whose values are searched for."""
        return sorted({name for _, name in self._needles})

    def scrub(self, body: bytes, provider: str) -> bytes:
        """``body`` with every guarded value replaced by ``[redacted NAME]``."""
        for needle, name in self._needles:
            if needle in body:
                body = body.replace(needle, f"[redacted {name}]".encode())
                if name not in self._warned:
                    self._warned.add(name)
                    logger.warning(
                        "%s: the value of %s was in a request (a message, a tool result or "
                        "the system prompt) and was replaced by [redacted %s] before it was "
                        "sent; later requests are redacted the same way without a warning",
                        provider,
                        name,
                        name,
                    )
        return body
