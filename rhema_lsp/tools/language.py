"""The ``LanguageService`` seam: what the language tools ask of whoever knows
the code semantically (a language server).

Two implementations answer it, chosen by the front door:

- **the editor's own language servers**, through a client that declared
  ``clientCapabilities.language`` (VS Code's language features, Neovim's other
  attached clients): the server sends the ``rhema/language`` request and the
  client answers with the raw LSP result;
- **the agent's own language servers** everywhere else (plain LSP clients,
  ACP, headless): started lazily per folder and language, fed the agent's
  view of each document.

The seam speaks raw LSP JSON (``Location[]``, ``WorkspaceEdit``,
``DocumentSymbol[]``/``SymbolInformation[]``, ``Diagnostic[]``), so every
implementation is a passthrough and the formatting for the model lives once,
in the tools. Rules:

- ``None`` means "no language server for this document's language": the
  tools say so plainly, with how to get one.
- ``request`` is only ever called with a method of :data:`LANGUAGE_METHODS`,
  with the params that method takes in the LSP spec; positions use the
  editor's negotiated position encoding.
- ``diagnostics`` answers for exactly ``version`` of the document (the
  edited version), waiting at most ``wait`` seconds; ``complete=False`` says
  the server did not answer for that version in time.
- Implementations never raise for a server's failure: they raise
  :class:`LanguageFailed` with a message the model can read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from rhema_lsp.tools.errors import ToolError

__all__ = [
    "LANGUAGE_METHODS",
    "DiagnosticsAnswer",
    "LanguageAnswer",
    "LanguageFailed",
    "LanguageService",
]

LANGUAGE_METHODS: Final = frozenset(
    {
        "textDocument/definition",
        "textDocument/references",
        "textDocument/documentSymbol",
        "textDocument/rename",
        "workspace/symbol",
    }
)
"""The LSP requests the language tools make through the seam."""


class LanguageFailed(ToolError):
    """A language server that failed, crashed or refused the request; the
    message names the server and what it said."""


@dataclass(frozen=True, slots=True)
class LanguageAnswer:
    """One LSP request's answer.

    Parameters
    ----------
    result
        The raw LSP result, as JSON (``None`` for an empty answer).
    source
        Who answered, for the model and the status (``"basedpyright"``,
        ``"VS Code"``, ``"nvim: pyright"``).
    """

    result: Any
    source: str


@dataclass(frozen=True, slots=True)
class DiagnosticsAnswer:
    """A document's current problems.

    Parameters
    ----------
    diagnostics
        Raw LSP ``Diagnostic`` objects as JSON.
    source
        Who answered.
    complete
        ``False`` when the server had not answered for the asked version
        within the wait (the list is then the last known, possibly empty).
    """

    diagnostics: Sequence[Mapping[str, Any]] = field(default_factory=tuple)
    source: str = ""
    complete: bool = True


class LanguageService(Protocol):
    """What the language tools ask (see the module docstring)."""

    async def request(
        self, method: str, params: Mapping[str, Any], *, uri: str
    ) -> LanguageAnswer | None:
        """Sends ``method`` about the document ``uri`` (whose language picks
        the server); ``None`` when no language server serves it."""
        ...

    async def diagnostics(
        self, uri: str, version: int | None, *, wait: float
    ) -> DiagnosticsAnswer | None:
        """The problems of ``uri`` at ``version`` (``None``: the current
        text), within ``wait`` seconds; ``None`` when no server serves it."""
        ...
