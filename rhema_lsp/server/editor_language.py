"""The editor's own language servers, asked over ``rhema/language``.

:class:`EditorLanguage` is the :class:`~rhema_lsp.tools.LanguageService` of
a client that declared ``clientCapabilities.language`` (our VS Code and
Neovim clients): each question is one server → client request, answered by
the client from its editor's language features (see "The editor's language
servers" in ``docs/protocol.md``). Rules:

- Bounded: an LSP method gets :attr:`EditorLanguage.timeout` seconds,
  ``diagnostics`` its own wait plus :attr:`EditorLanguage.margin`; an
  unanswered request is withdrawn (``$/cancelRequest``, a late answer is
  ignored).
- Versioned: ``diagnostics`` of ``version=None`` (the current text) ask
  for the version the document sync holds now, so the client waits for
  the problems of exactly the text the server sees (an edit's, once it is
  applied); a document the client has not opened is asked as it is.
- Checked: the answer is the contract's shape, and what it carries is LSP's
  (the ``result`` structures as the method's LSP result type, each
  diagnostic as a ``Diagnostic``), so the tools format only valid LSP.
- Never raises but :class:`~rhema_lsp.tools.LanguageFailed`, whose message
  says what the editor did (an error reply, a wrong answer, no answer):
  one tool call fails, the run and the server go on.

:class:`EditorFirst` puts the agent's own language servers behind the
editor's: a document no language server of the editor serves (its answer is
``None``) is asked of the agent's own; only with neither do the tools say
there is none. A failure of the editor's is not passed on to the agent's.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import cattrs
from lsprotocol import converters, types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException

from rhema_lsp.contract.language import (
    DIAGNOSTICS,
    LANGUAGE_REQUEST,
    DiagnosticsParams,
    DiagnosticsResult,
    LanguageResult,
)
from rhema_lsp.tools import (
    DiagnosticsAnswer,
    Editor,
    LanguageAnswer,
    LanguageFailed,
    LanguageService,
)

if TYPE_CHECKING:
    from rhema_lsp.server.pygls_adapter import LspServer

__all__ = ["EditorFirst", "EditorLanguage"]

logger = logging.getLogger(__name__)

REQUEST_TIMEOUT = 10.0
"""Seconds an LSP method's answer may take."""

DIAGNOSTICS_MARGIN = 5.0
"""Seconds beyond its own wait a ``diagnostics`` answer may take."""

_SOURCE_MAX = 80
_DETAIL_MAX = 300


class EditorLanguage:
    """The language tools' answers, from the client's editor."""

    def __init__(
        self,
        server: LspServer,
        editor: Editor,
        *,
        timeout: float = REQUEST_TIMEOUT,
        margin: float = DIAGNOSTICS_MARGIN,
    ) -> None:
        self._server = server
        self._editor = editor
        self.timeout = timeout
        self.margin = margin

    async def request(
        self, method: str, params: Mapping[str, Any], *, uri: str
    ) -> LanguageAnswer | None:
        answer = await self._ask(method, dict(params), self.timeout)
        if answer is None:
            return None
        parsed = _parse(LanguageResult, answer, method)
        _check_lsp(method, parsed.result)
        return LanguageAnswer(result=parsed.result, source=_source(parsed.source))

    async def diagnostics(
        self, uri: str, version: int | None, *, wait: float
    ) -> DiagnosticsAnswer | None:
        wait = max(wait, 0.0)
        if version is None:
            document = self._editor.open_document(uri)
            version = document.version if document is not None else None
        params = DiagnosticsParams(uri=uri, version=version, wait_ms=round(wait * 1000))
        answer = await self._ask(DIAGNOSTICS, params.wire(), wait + self.margin)
        if answer is None:
            return None
        parsed = _parse(DiagnosticsResult, answer, DIAGNOSTICS)
        for diagnostic in parsed.diagnostics:
            _structure(types.Diagnostic, diagnostic, DIAGNOSTICS)
        return DiagnosticsAnswer(
            diagnostics=tuple(parsed.diagnostics),
            source=_source(parsed.source),
            complete=parsed.complete,
        )

    async def _ask(self, method: str, params: dict[str, Any], bound: float) -> Any:
        """The client's raw answer to ``rhema/language {method, params}``."""
        msg_id = f"rhema-language-{uuid.uuid4()}"
        protocol = self._server.protocol
        try:
            sent = protocol.send_request(
                LANGUAGE_REQUEST, {"method": method, "params": params}, msg_id=msg_id
            )
        except Exception as exc:  # a closed connection: the tool says so
            raise LanguageFailed(f"the editor could not be asked ({method}): {exc}") from exc
        try:
            async with asyncio.timeout(bound):
                return await asyncio.wrap_future(sent)
        except TimeoutError:
            protocol.withdraw_request(msg_id)
            logger.info("the editor did not answer %s (%s) in %ss", LANGUAGE_REQUEST, method, bound)
            raise LanguageFailed(
                f"the editor's language features did not answer {method} within "
                f"{bound:g} s (try again, or look at the editor's language server)"
            ) from None
        except JsonRpcException as exc:
            raise LanguageFailed(
                f"the editor's language features failed on {method}: {_cap(exc.message)}"
            ) from exc


class EditorFirst:
    """The editor's language servers, then the agent's own (see the module
    docstring)."""

    def __init__(self, editor: LanguageService, own: LanguageService) -> None:
        self.editor = editor
        self.own = own

    async def request(
        self, method: str, params: Mapping[str, Any], *, uri: str
    ) -> LanguageAnswer | None:
        answer = await self.editor.request(method, params, uri=uri)
        return answer if answer is not None else await self.own.request(method, params, uri=uri)

    async def diagnostics(
        self, uri: str, version: int | None, *, wait: float
    ) -> DiagnosticsAnswer | None:
        answer = await self.editor.diagnostics(uri, version, wait=wait)
        if answer is not None:
            return answer
        return await self.own.diagnostics(uri, version, wait=wait)


_M = TypeVar("_M", bound=BaseModel)


def _parse(model: type[_M], answer: Any, method: str) -> _M:
    try:
        return model.model_validate(answer)
    except ValidationError as exc:
        problems = "; ".join(
            f"`{'.'.join(str(part) for part in error['loc'])}` {error['msg']}"
            if error["loc"]
            else error["msg"]
            for error in exc.errors(include_url=False)
        )
        raise _invalid(method, problems) from exc


def _check_lsp(method: str, result: Any) -> None:
    """``result`` is what LSP says ``method`` answers."""
    if result is None:
        return
    kinds = types.METHOD_TO_TYPES.get(method)
    if kinds is None:
        raise LanguageFailed(f"{method} is not a language method the editor answers")
    response = {"jsonrpc": "2.0", "id": 0, "result": result}
    _structure(kinds[1], response, method)


@functools.cache
def _converter() -> cattrs.Converter:
    return converters.get_converter()


def _structure(kind: Any, value: Any, method: str) -> None:
    try:
        _converter().structure(value, kind)
    except Exception as exc:  # any structuring failure is the answer's fault
        if isinstance(exc, cattrs.BaseValidationError):
            detail = "; ".join(cattrs.transform_error(exc))
        else:
            detail = f"{type(exc).__name__}: {exc}"
        raise _invalid(method, detail) from exc


def _invalid(method: str, detail: str) -> LanguageFailed:
    logger.info("the editor answered %s (%s) wrongly: %s", LANGUAGE_REQUEST, method, detail)
    return LanguageFailed(
        f"the editor answered {method} with something that is not a valid answer: {_cap(detail)}"
    )


def _source(source: str) -> str:
    """Who answered, on one short line (it is shown to the model)."""
    one_line = " ".join(source.split()) or "the editor"
    return one_line[:_SOURCE_MAX]


def _cap(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _DETAIL_MAX else text[: _DETAIL_MAX - 1] + "…"
