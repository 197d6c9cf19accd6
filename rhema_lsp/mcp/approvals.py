"""The approval of an MCP call, with "always allow this tool" offered in the
question itself.

A tool the server's ``allow`` list names is called without asking. Any other
is asked through the editor's ``confirm`` with three choices: :data:`DENY`,
:data:`ALLOW` (this call) and :data:`ALWAYS` (this tool of this server, from
now on). :data:`ALWAYS` is remembered in the server's connection
(:attr:`Approvals.tools`), which lives as long as the process serves the
editor (the session; a changed entry starts a new connection and asks
again), exactly as a tool the ``allow`` list names: later calls, whatever
their arguments, are not asked. To keep the choice past the session, the
user adds the tool to the entry's ``allow``. An editor
whose approvals have their own "always" (ACP's ``allow_always``) answers
:data:`ALLOW` and keeps its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rhema_lsp.tools.editor import DENY, Editor

__all__ = ["ALLOW", "ALWAYS", "Approvals"]

ALLOW = "Allow"
ALWAYS = "Always allow this tool"


@dataclass(slots=True)
class Approvals:
    """The tools of one server the user allowed for good this session."""

    tools: set[str] = field(default_factory=set)

    def allowed(self, tool: str) -> bool:
        """Whether ``tool`` was allowed for good."""
        return tool in self.tools

    async def ask(self, editor: Editor, tool: str, question: str) -> bool:
        """Ask ``question`` about a call to ``tool``; whether it is approved
        (:data:`ALWAYS` remembers the tool)."""
        answer = await editor.confirm(question, [DENY, ALLOW, ALWAYS])
        if answer == ALWAYS:
            self.tools.add(tool)
        return answer in (ALLOW, ALWAYS)
