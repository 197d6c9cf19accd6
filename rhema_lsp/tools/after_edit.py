"""Diagnostics after every edit: what an ``edit_file``, ``write_file`` or
``rename_symbol`` changed in the problems of the files it touched.

:class:`EditWatch` is told of each document just before a change to it is
sent (by :class:`~rhema_lsp.tools.edit_base.EditingBase`, the one place
every text change crosses) and asks the language service for the problems
of that pre-edit text; once the tool is done, :meth:`EditWatch.report` asks
again for the edited version (waiting at most ``wait`` seconds) and writes
the difference: ``1 new error: pkg/use.py:3: ... (basedpyright)``, and the
problems gone. Rules:

- Problems are compared as multisets of (severity, message, source, code):
  lines move with an edit; a moved problem is neither new nor gone.
- When the pre-edit problems came late, the problems after the edit are
  listed as they are (never guessed new).
- Nothing is written when nothing changed, or when no server serves the
  file. A server that did not answer for the edited version in time is
  said, never passed off as "no problems".
- The watch never fails the edit: a :class:`LanguageFailed` becomes a note.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rhema_lsp.tools.errors import ToolError
from rhema_lsp.tools.language import LanguageService
from rhema_lsp.tools.language_text import MAX_ITEMS, Problem, problems
from rhema_lsp.tools.positions import uri_to_path
from rhema_lsp.tools.workspace import Workspace

__all__ = ["WATCHED_TOOLS", "EditWatch"]

WATCHED_TOOLS = frozenset({"edit_file", "write_file", "rename_symbol"})
"""The tools whose results end with the diagnostics they changed."""


@dataclass
class _Touched:
    before: list[Problem] | None
    """``None``: no server serves the file (nothing is reported)."""
    notes: list[str] = field(default_factory=list)
    known: bool = True
    """Whether ``before`` is the server's answer for the pre-edit text (it
    may have been late): if not, the problems after are listed as they are."""


class EditWatch:
    """Diagnostics before and after each watched call (see the module docstring).

    Parameters
    ----------
    ws
        The workspace (paths are shown relative to its folder).
    language
        Who answers.
    wait
        Seconds to wait for the edited version's diagnostics.
    """

    def __init__(self, ws: Workspace, language: LanguageService, wait: float) -> None:
        self.ws = ws
        self.language = language
        self.wait = wait
        self._calls: dict[str, dict[str, _Touched]] = {}

    async def before(self, call_id: str, tool: str, uri: str, text: str | None) -> None:
        """``uri`` is about to change under ``call_id`` (it holds ``text``,
        ``None``: absent)."""
        if tool not in WATCHED_TOOLS:
            return
        touched = self._calls.setdefault(call_id, {})
        if uri in touched:
            return
        if text is None:
            touched[uri] = _Touched([])
            return
        entry = _Touched(None)
        try:
            answer = await self.language.diagnostics(uri, None, wait=self.wait)
        except ToolError as exc:
            entry.notes.append(f"diagnostics unavailable: {exc}")
            answer = None
        if answer is not None:
            entry.before = problems(answer.diagnostics, answer.source)
            entry.known = answer.complete
        touched[uri] = entry

    def forget(self, call_id: str) -> None:
        """Drop what ``call_id`` recorded (it failed: nothing is reported)."""
        self._calls.pop(call_id, None)

    async def report(self, call_id: str) -> str:
        """What ``call_id``'s changes did to the problems of the files it
        touched ("" when nothing changed), each line prefixed by a newline."""
        touched = self._calls.pop(call_id, {})
        lines: list[str] = []
        for uri, entry in touched.items():
            lines += entry.notes
            if entry.before is None:
                continue
            try:
                answer = await self.language.diagnostics(uri, None, wait=self.wait)
            except ToolError as exc:
                lines.append(f"diagnostics unavailable: {exc}")
                continue
            if answer is None:
                continue
            shown = self.ws.display(uri_to_path(uri))
            if not answer.complete:
                lines.append(
                    f"{answer.source} did not report diagnostics for the edited {shown} within "
                    f"{self.wait:g} s; call diagnostics to check"
                )
                continue
            after = problems(answer.diagnostics, answer.source)
            if entry.known:
                lines += _difference(shown, entry.before, after)
            elif after:
                lines.append(
                    f"{len(after)} problem{'s' if len(after) != 1 else ''} in {shown} now:"
                )
                lines += [f"  {_line(shown, p)}" for p in after]
        return "".join(f"\n{line}" for line in lines[: MAX_ITEMS + 2])


def _difference(shown: str, before: list[Problem], after: list[Problem]) -> list[str]:
    old = Counter(p.key for p in before)
    new = Counter(p.key for p in after)
    introduced = _pick(after, new - old)
    gone = _pick(before, old - new)
    return _said(shown, introduced, "new") + _said(shown, gone, "gone")


def _pick(found: list[Problem], wanted: Counter[tuple[str, str, str, str]]) -> list[Problem]:
    picked = []
    left = Counter(wanted)
    for problem in found:
        if left[problem.key] > 0:
            left[problem.key] -= 1
            picked.append(problem)
    return picked


def _said(shown: str, found: list[Problem], how: str) -> list[str]:
    if not found:
        return []
    if len(found) == 1:
        (p,) = found
        what = f"1 new {p.severity}" if how == "new" else f"1 {p.severity} gone"
        return [f"{what}: {shown}:{p.line + 1}: {p.message} ({p.source})"]
    head = f"{len(found)} new problems:" if how == "new" else f"{len(found)} problems gone:"
    return [head] + [f"  {_line(shown, p)}" for p in found]


def _line(shown: str, p: Problem) -> str:
    return f"{shown}:{p.line + 1}: {p.severity}: {p.message} ({p.source})"
