"""A stored session's history as the ``session/update``\\ s that show it.

``session/load`` replays the conversation before it answers: user messages
as ``user_message_chunk``, kept reasoning as ``agent_thought_chunk``, answers
as ``agent_message_chunk``, and each tool call as one ``tool_call`` already
in its final state (completed or failed, with its result's text), or
``pending`` when a crash left it without a result.
"""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    TextContentBlock,
    ToolCallStart,
    ToolCallStatus,
    UserMessageChunk,
)

from rhema_lsp.acp.calls import kind_of, title_of
from rhema_lsp.acp.updates import SessionUpdate, text_content
from rhema_lsp.engine import Role, Session, TextPart, ThinkingPart, ToolCall, ToolResult

__all__ = ["replay"]


def replay(session: Session) -> list[SessionUpdate]:
    """The updates that show ``session``'s history, in order."""
    results = {
        part.id: part
        for message in session.history
        for part in message.content
        if isinstance(part, ToolResult)
    }
    updates: list[SessionUpdate] = []
    for message in session.history:
        for part in message.content:
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
            elif isinstance(part, ThinkingPart) and part.text:
                updates.append(
                    AgentThoughtChunk(
                        session_update="agent_thought_chunk",
                        content=TextContentBlock(type="text", text=part.text),
                    )
                )
            elif isinstance(part, ToolCall):
                updates.append(_call(part, results.get(part.id)))
    return updates


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
