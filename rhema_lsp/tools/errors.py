"""The tools layer's one exception family, never seen by the engine.

::

    ToolError            an in-band failure: its message is what the model reads
     └── PathRefused     a path the confinement rules refuse (names the path and why)

Every public tool catches :class:`ToolError` at the resolver boundary and turns
it into :meth:`ToolResult.failure`; OS errors are mapped into it where they
happen (``raise ToolError(...) from exc``) so the message can name the path.
"""

from __future__ import annotations

__all__ = ["PathRefused", "ToolError"]


class ToolError(Exception):
    """A tool call that cannot be carried out; the message tells the model why
    and, where it can, what to do next."""


class PathRefused(ToolError):
    """A path outside the workspace or otherwise off limits to the agent."""
