"""Why a step or a turn failed.

::

    AgentError
    ├── MissingProviderError   the agent was built without a provider
    ├── AgentProviderError     the model call failed (wraps ProviderError)
    ├── CommitError            commit-before-execute failed; no tool ran
    └── StepLimitError         the turn still wanted tools after N steps

Tool failures are never among them: they are in-band results.
"""

from __future__ import annotations

from rhema_lsp.engine.provider import ProviderError

__all__ = [
    "AgentError",
    "AgentProviderError",
    "CommitError",
    "MissingProviderError",
    "StepLimitError",
]


class AgentError(Exception):
    """The root of every engine failure."""


class MissingProviderError(AgentError):
    """The agent was built without a model provider."""

    def __init__(self) -> None:
        super().__init__("agent built without a model provider")


class AgentProviderError(AgentError):
    """The model call failed; the message is the provider's own."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(str(error))
        self.error = error


class CommitError(AgentError):
    """The commit hook failed: the assistant message is in the history, but no
    tool ran, so no side effect started whose intent was not durable."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"commit before tool execution failed: {reason}")
        self.reason = reason


class StepLimitError(AgentError):
    """The turn was still requesting tools after ``steps`` steps."""

    def __init__(self, steps: int) -> None:
        super().__init__(
            f"stopped after {steps} steps without finishing; send a follow-up "
            "to keep going, or raise the step limit"
        )
        self.steps = steps
