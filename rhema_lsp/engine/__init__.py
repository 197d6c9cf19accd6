"""The step engine: pure, no I/O.

It imports nothing of the project's other layers and no I/O library (no
pygls, lsprotocol, httpx or sqlite3). Providers, tools and session stores
plug in through the protocols defined here: :class:`ModelProvider`,
:class:`ToolResolver`, :class:`EventSink` and :data:`CommitHook`.
"""

from typing import TYPE_CHECKING

from rhema_lsp.lazy import lazy_root

if TYPE_CHECKING:
    from rhema_lsp.engine.agent import (
        PAUSE_CONTINUATIONS,
        Agent,
        CommitHook,
        record_result,
        run_turn,
    )
    from rhema_lsp.engine.budget import (
        DEFAULT_THRESHOLD,
        ContextBudget,
        TokenEstimator,
        request_bytes,
    )
    from rhema_lsp.engine.calls import invalid_json_arguments, resolve_call
    from rhema_lsp.engine.compaction import SUMMARY_HEADER, Compactor
    from rhema_lsp.engine.errors import (
        AgentError,
        AgentProviderError,
        CommitError,
        MissingProviderError,
        StepLimitError,
    )
    from rhema_lsp.engine.events import (
        ChildEvent,
        CompactionEvent,
        ContextFill,
        ErrorEvent,
        Event,
        EventSink,
        PlanEntry,
        PlanUpdate,
        ProviderToolUse,
        RetryWait,
        RulesInUse,
        StepEnd,
        StepStart,
        TextDelta,
        ThinkingDelta,
        ToolCallArgsDelta,
        ToolCallStart,
        ToolOutputDelta,
        ToolResultEvent,
        ToolStatus,
        ToolStatusEvent,
        TurnEnd,
        UsageUpdate,
    )
    from rhema_lsp.engine.ids import ENGINE_ID_PREFIX, CallIds, session_ids
    from rhema_lsp.engine.images import (
        IMAGE_MAX_BYTES,
        ImageRefused,
        ImageSupport,
        SeesImages,
        fit_images,
        image_from_base64,
        image_part,
        refusal,
        sniff_image,
        support_of,
    )
    from rhema_lsp.engine.messages import (
        Compaction,
        ImagePart,
        JsonValue,
        Message,
        Part,
        ProviderPart,
        Role,
        Session,
        TextPart,
        ThinkingPart,
        ToolCall,
        ToolResult,
    )
    from rhema_lsp.engine.output import ModelOutput, Step, StopReason, Usage
    from rhema_lsp.engine.provider import ModelProvider, ProviderError
    from rhema_lsp.engine.request import ChatParams, ModelRequest, ThinkingEffort, ToolSpec
    from rhema_lsp.engine.resume import ResumeReport, pending_calls, resume
    from rhema_lsp.engine.tools import (
        CancelSignal,
        DelegatingResolver,
        Progress,
        ReplaySafety,
        StatusReporter,
        StreamingToolResolver,
        ToolContext,
        ToolResolver,
    )
    from rhema_lsp.engine.truncate import TOOL_RESULT_CAP, truncate_tool_result

__all__ = [
    "DEFAULT_THRESHOLD",
    "ENGINE_ID_PREFIX",
    "IMAGE_MAX_BYTES",
    "PAUSE_CONTINUATIONS",
    "SUMMARY_HEADER",
    "TOOL_RESULT_CAP",
    "Agent",
    "AgentError",
    "AgentProviderError",
    "CallIds",
    "CancelSignal",
    "ChatParams",
    "ChildEvent",
    "CommitError",
    "CommitHook",
    "Compaction",
    "CompactionEvent",
    "Compactor",
    "ContextBudget",
    "ContextFill",
    "DelegatingResolver",
    "ErrorEvent",
    "Event",
    "EventSink",
    "ImagePart",
    "ImageRefused",
    "ImageSupport",
    "JsonValue",
    "Message",
    "MissingProviderError",
    "ModelOutput",
    "ModelProvider",
    "ModelRequest",
    "Part",
    "PlanEntry",
    "PlanUpdate",
    "Progress",
    "ProviderError",
    "ProviderPart",
    "ProviderToolUse",
    "ReplaySafety",
    "ResumeReport",
    "RetryWait",
    "Role",
    "RulesInUse",
    "SeesImages",
    "Session",
    "StatusReporter",
    "Step",
    "StepEnd",
    "StepLimitError",
    "StepStart",
    "StopReason",
    "StreamingToolResolver",
    "TextDelta",
    "TextPart",
    "ThinkingDelta",
    "ThinkingEffort",
    "ThinkingPart",
    "TokenEstimator",
    "ToolCall",
    "ToolCallArgsDelta",
    "ToolCallStart",
    "ToolContext",
    "ToolOutputDelta",
    "ToolResolver",
    "ToolResult",
    "ToolResultEvent",
    "ToolSpec",
    "ToolStatus",
    "ToolStatusEvent",
    "TurnEnd",
    "Usage",
    "UsageUpdate",
    "fit_images",
    "image_from_base64",
    "image_part",
    "invalid_json_arguments",
    "pending_calls",
    "record_result",
    "refusal",
    "request_bytes",
    "resolve_call",
    "resume",
    "run_turn",
    "session_ids",
    "sniff_image",
    "support_of",
    "truncate_tool_result",
]

lazy_root(__name__)
