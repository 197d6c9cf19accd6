"""The ``rhema/language`` request: the server asks the editor's own language
servers, through a client that declared ``clientCapabilities.language``.

One request, two forms, told apart by ``method``:

- an LSP method of :data:`LANGUAGE_METHODS` with that method's LSP params
  (positions in the negotiated encoding) → :class:`LanguageResult`, the raw
  LSP result and who answered, or ``null`` when no language server serves
  the document;
- ``diagnostics`` with :class:`DiagnosticsParams` → :class:`DiagnosticsResult`,
  the document's problems for exactly ``version``, waited for at most
  ``waitMs``, or ``null`` when no language server serves the document.

Answers are checked by the server (unknown fields ignored, so a newer client
may say more); what is inside ``result`` is checked against the LSP method's
own result type there too, never here (the contract imports no LSP types).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import ConfigDict

from rhema_lsp.contract.base import Wire

__all__ = [
    "DIAGNOSTICS",
    "LANGUAGE_METHODS",
    "LANGUAGE_REQUEST",
    "DiagnosticsParams",
    "DiagnosticsResult",
    "LanguageParams",
    "LanguageResult",
]

LANGUAGE_REQUEST: Final = "rhema/language"
"""The server → client request's method."""

DIAGNOSTICS: Final = "diagnostics"
"""The ``method`` of the diagnostics form."""

LANGUAGE_METHODS: Final = (
    "textDocument/definition",
    "textDocument/references",
    "textDocument/documentSymbol",
    "textDocument/rename",
    "workspace/symbol",
)
"""The LSP requests a client answers with its editor's language servers."""

LanguageMethod = Literal[
    "textDocument/definition",
    "textDocument/references",
    "textDocument/documentSymbol",
    "textDocument/rename",
    "workspace/symbol",
    "diagnostics",
]


class LanguageParams(Wire):
    """The params of ``rhema/language``: ``params`` are the LSP method's own
    params, or ``DiagnosticsParams`` for ``diagnostics``."""

    method: LanguageMethod
    params: dict[str, Any]


class DiagnosticsParams(Wire):
    """Which document's problems, at which version (``null``: its current
    text), waiting at most ``waitMs`` for the language servers to report on
    that version."""

    uri: str
    version: int | None
    wait_ms: int


class _Answer(Wire):
    model_config = ConfigDict(extra="ignore")


class LanguageResult(_Answer):
    """An LSP method's answer: its raw LSP ``result`` (``null`` for an empty
    one) and who answered (``"VS Code"``, ``"nvim: basedpyright"``)."""

    result: Any
    source: str


class DiagnosticsResult(_Answer):
    """A document's problems: raw LSP ``Diagnostic`` objects, who answered,
    and ``complete: false`` when the language servers had not reported on
    the asked version within the wait (the list is then the last known)."""

    diagnostics: list[dict[str, Any]]
    source: str
    complete: bool
