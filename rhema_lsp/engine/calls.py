"""Resolving one call, the same way in a step and on resume.

The rules every result goes through, whoever produced it: arguments whose raw
text is not valid JSON never reach the resolver (the model is asked to
re-issue the call); a resolver that raises instead of returning a failure is
turned into an in-band error; and every result is capped by
:func:`truncate_tool_result`. Cancellation is not an error and passes through.
"""

from __future__ import annotations

import json

from rhema_lsp.engine.events import EventSink, ToolOutputDelta, ToolStatus, ToolStatusEvent
from rhema_lsp.engine.messages import ToolCall, ToolResult
from rhema_lsp.engine.tools import ToolContext, ToolResolver
from rhema_lsp.engine.truncate import truncate_tool_result

__all__ = ["invalid_json_arguments", "resolve_call"]


def invalid_json_arguments(call: ToolCall) -> bool:
    """Whether the call's raw argument text is present but not valid JSON."""
    raw = call.raw_args
    if raw is None or not raw.strip():
        return False
    try:
        json.loads(raw)
    except ValueError:
        return True
    return False


async def resolve_call(
    resolver: ToolResolver | None,
    call: ToolCall,
    ctx: ToolContext,
    sink: EventSink,
) -> ToolResult:
    """Resolve ``call`` to a capped result; never raises except to cancel.

    The resolver's output lines and status reach ``sink`` stamped with the
    call's id: the resolver knows only its own progress.
    """

    def progress(chunk: str) -> None:
        sink.emit(ToolOutputDelta(id=call.id, chunk=chunk))

    def status(value: ToolStatus) -> None:
        sink.emit(ToolStatusEvent(id=call.id, status=value))

    if resolver is None:
        return ToolResult.failure(call.id, "no tool resolver is configured")
    if invalid_json_arguments(call):
        raw = truncate_tool_result(call.raw_args or "")
        return ToolResult.failure(
            call.id, f"tool arguments were not valid JSON; re-issue the call. raw: {raw}"
        )
    try:
        result = await resolver.resolve_streaming(call, ctx, progress, status)
    except Exception as exc:  # noqa: BLE001 -- a resolver bug must still end in-band
        result = ToolResult.failure(
            call.id, f"tool `{call.name}` failed unexpectedly: {type(exc).__name__}: {exc}"
        )
    if result.id != call.id:
        result = result.model_copy(update={"id": call.id})
    capped = truncate_tool_result(result.content, ctx.result_cap)
    if capped is not result.content:
        result = result.model_copy(update={"content": capped})
    return result
