"""A typed name for one turn of one session.

:class:`TurnRef` is what every front door passes around for "turn 3 of
session ab12…": the run registry's runs, the pipeline, the checkpoint
journal. The engine's :class:`~rhema_lsp.engine.ToolContext` carries it as
a plain string (:attr:`TurnRef.run_id`, the engine knows no sessions), and
the tools hand that string back to their journal, which reads it with
:meth:`TurnRef.parse`: the one place the string is built and the one place
it is read.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TurnRef"]


@dataclass(frozen=True, slots=True)
class TurnRef:
    """Turn ``turn`` (from 1; 0 before a session's first) of ``session``."""

    session: str
    turn: int

    @property
    def run_id(self) -> str:
        """The engine's run id of this turn: ``"<session>:<turn>"``."""
        return f"{self.session}:{self.turn}"

    @classmethod
    def parse(cls, run_id: str) -> TurnRef:
        """The turn a :attr:`run_id` names.

        Raises
        ------
        ValueError
            ``run_id`` does not name a session's turn (from 1).
        """
        session, _, turn = run_id.rpartition(":")
        if not session or not turn.isdigit() or int(turn) < 1:
            raise ValueError(f"run id {run_id!r} does not name a session's turn")
        return cls(session, int(turn))

    def __str__(self) -> str:
        return self.run_id
