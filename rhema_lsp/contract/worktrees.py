"""The contract of sessions that run in their own git worktree: what
``rhema.sessions`` and ``rhema.turn`` say of one (:class:`WorktreeInfo`),
its changes one per file for review (``rhema.worktreeDiff``), and what
applying (``rhema.worktreeApply``: a three-way merge into the checkout that
reports conflicts and then writes nothing) and discarding
(``rhema.worktreeDiscard``) did."""

from __future__ import annotations

from rhema_lsp.contract.base import Wire

__all__ = [
    "WorktreeApplyResult",
    "WorktreeDiffResult",
    "WorktreeDiscardResult",
    "WorktreeFile",
    "WorktreeInfo",
]


class WorktreeInfo(Wire):
    """A session's worktree: its ``name``, ``branch`` (``rhema/<name>``),
    ``path`` (under the user state directory), the ``checkout`` it came from
    and will be applied to, and the files it ``changed`` since it was made
    (relative to the checkout's top)."""

    name: str
    branch: str
    path: str
    checkout: str
    changed: list[str]


class WorktreeFile(Wire):
    """One changed file: ``path`` relative to the checkout's top; ``before``
    the text the worktree started from, ``after`` its text now (``None``: no
    such file on that side, or not text)."""

    path: str
    before: str | None
    after: str | None


class WorktreeDiffResult(Wire):
    """A worktree session's changes, one per file."""

    session: str
    branch: str
    checkout: str
    files: list[WorktreeFile]


class WorktreeApplyResult(Wire):
    """The files written into the checkout, or the ones that conflict with
    the user's changes (then none was written)."""

    session: str
    branch: str
    applied: list[str]
    conflicts: list[str]


class WorktreeDiscardResult(Wire):
    """The worktree and its branch are removed."""

    session: str
    branch: str
    discarded: bool
