"""A stored session's history as the ``session/update``\\ s that show it.

``session/load`` replays the conversation before it answers: user messages
(their text and their images) as ``user_message_chunk``, kept reasoning as
``agent_thought_chunk``, answers as ``agent_message_chunk``, and each tool
call as one ``tool_call`` already in its final state (completed or failed,
with its result's text), or ``pending`` when a crash left it without a
result; then the session's plan (the last ``update_plan``), if it has one,
as a ``plan`` update. A call's result is the first one after it under its
id: ids are unique within a session, but a session stored before the engine
made them so may repeat one.
"""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    ImageContentBlock,
    TextContentBlock,
    ToolCallStart,
    ToolCallStatus,
    UserMessageChunk,
)

from rhema_lsp.acp.calls import kind_of, title_of
from rhema_lsp.acp.updates import SessionUpdate, plan_update, text_content
from rhema_lsp.engine import (
    ImagePart,
    Role,
    Session,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
)
from rhema_lsp.tools import latest_plan

__all__ = ["replay"]


def replay(session: Session) -> list[SessionUpdate]:
    """The updates that show ``session``'s history, in order."""
    results = _results(session)
    updates: list[SessionUpdate] = []
    for at, message in enumerate(session.history):
        for index, part in enumerate(message.content):
            if isinstance(part, TextPart) and part.text:
                block = TextContentBlock(type="text", text=part.text)
                if message.role is Role.USER:
                    updates.append(
                        UserMessageChunk(session_update="user_message_chunk", content=block)
                    )
                else:
                    updates.append(
                        AgentMessageChunk(session_update="agent_message_chunk", content=block)
                    )
            elif isinstance(part, ImagePart) and message.role is Role.USER and part.data:
                image = ImageContentBlock(type="image", data=part.data, mime_type=part.media_type)
                updates.append(UserMessageChunk(session_update="user_message_chunk", content=image))
            elif isinstance(part, ThinkingPart) and part.text:
                updates.append(
                    AgentThoughtChunk(
                        session_update="agent_thought_chunk",
                        content=TextContentBlock(type="text", text=part.text),
                    )
                )
            elif isinstance(part, ToolCall):
                updates.append(_call(part, results.get((at, index))))
    plan = latest_plan(session.history)
    if plan is not None:
        updates.append(plan_update(plan))
    return updates


def _results(session: Session) -> dict[tuple[int, int], ToolResult]:
    """Each call's result, by the call's place (message, part): the first
    result after the call under its id."""
    waiting: dict[str, list[tuple[int, int]]] = {}
    results: dict[tuple[int, int], ToolResult] = {}
    for at, message in enumerate(session.history):
        for index, part in enumerate(message.content):
            if isinstance(part, ToolCall):
                waiting.setdefault(part.id, []).append((at, index))
            elif isinstance(part, ToolResult) and waiting.get(part.id):
                results[waiting[part.id].pop(0)] = part
    return results


def _call(call: ToolCall, result: ToolResult | None) -> ToolCallStart:
    status: ToolCallStatus
    content: list[ContentToolCallContent | Any] | None
    if result is None:
        status, content = "pending", None
    else:
        status = "failed" if result.is_error else "completed"
        content = [text_content(result.content)] if result.content else None
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call.id,
        title=title_of(call.name, call.args),
        kind=kind_of(call.name),
        status=status,
        content=content,
        raw_input=call.args,
    )
