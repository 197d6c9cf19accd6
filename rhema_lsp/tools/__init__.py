"""The agent's hands: workspace-confined tools behind the engine's ``ToolResolver``.

:class:`WorkspaceTools` offers the mode's tools (read, search, edit, command)
and never reaches outside the workspace roots (:class:`Planning` adds
``update_plan`` in every mode); edits go to an :class:`Editor`
as minimal, versioned ``WorkspaceEdit``\\ s. :class:`DiskEditor` (headless)
and :class:`MemoryEditor` (tests) implement the editor seam here; the server
implements it over LSP. This package never imports pygls.
"""

from typing import TYPE_CHECKING

from rhema_lsp.lazy import lazy_root

if TYPE_CHECKING:
    from rhema_lsp.tools.commands import is_allowlisted
    from rhema_lsp.tools.disk_editor import DiskEditor
    from rhema_lsp.tools.editor import ConfirmCallback, Editor, EditOutcome, OpenDocument
    from rhema_lsp.tools.errors import PathRefused, ToolError
    from rhema_lsp.tools.journal import EditJournal, Journal, JournalEntry
    from rhema_lsp.tools.language import (
        LANGUAGE_METHODS,
        DiagnosticsAnswer,
        LanguageAnswer,
        LanguageFailed,
        LanguageService,
    )
    from rhema_lsp.tools.memory_editor import MemoryEditor, ReceivedEdit
    from rhema_lsp.tools.planning import UPDATE_PLAN, Planning, latest_plan
    from rhema_lsp.tools.positions import (
        LineIndex,
        apply_text_edits,
        apply_workspace_edit_to_text,
        minimal_edits,
        path_to_uri,
        uri_to_path,
    )
    from rhema_lsp.tools.resolver import WorkspaceTools
    from rhema_lsp.tools.ripgrep import ripgrep_binary
    from rhema_lsp.tools.spawn import Launch, Unlaunchable, launch, scrubbed_environment
    from rhema_lsp.tools.specs import READ_TOOLS, TOOLS_BY_MODE
    from rhema_lsp.tools.workspace import Access, Target, Workspace

__all__ = [
    "LANGUAGE_METHODS",
    "READ_TOOLS",
    "TOOLS_BY_MODE",
    "UPDATE_PLAN",
    "Access",
    "ConfirmCallback",
    "DiagnosticsAnswer",
    "DiskEditor",
    "EditJournal",
    "EditOutcome",
    "Editor",
    "Journal",
    "JournalEntry",
    "LanguageAnswer",
    "LanguageFailed",
    "LanguageService",
    "Launch",
    "LineIndex",
    "MemoryEditor",
    "OpenDocument",
    "PathRefused",
    "Planning",
    "ReceivedEdit",
    "Target",
    "ToolError",
    "Unlaunchable",
    "Workspace",
    "WorkspaceTools",
    "apply_text_edits",
    "apply_workspace_edit_to_text",
    "is_allowlisted",
    "latest_plan",
    "launch",
    "minimal_edits",
    "path_to_uri",
    "ripgrep_binary",
    "scrubbed_environment",
    "uri_to_path",
]

lazy_root(__name__)
