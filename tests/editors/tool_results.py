"""What the model was told: each tool call's result, read from the requests the
fake model server received (OpenAI wire)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["tool_results"]


def tool_results(requests: list[Any]) -> dict[str, str]:
    """Each tool call's result by its tool's name, a repeated tool's later calls
    as ``name#2``, ``name#3``, in the order the calls were made."""
    names: dict[str, str] = {}
    order: list[str] = []
    contents: dict[str, str] = {}
    for request in requests:
        for message in request["messages"]:
            for call in message.get("tool_calls") or []:
                if call["id"] not in names:
                    names[call["id"]] = call["function"]["name"]
                    order.append(call["id"])
            if message["role"] == "tool":
                content = message["content"]
                text = content if isinstance(content, str) else json.dumps(content)
                contents.setdefault(message["tool_call_id"], text)
    results: dict[str, str] = {}
    counts: dict[str, int] = {}
    for call_id in order:
        if call_id not in contents:
            continue
        name = names[call_id]
        counts[name] = counts.get(name, 0) + 1
        key = name if counts[name] == 1 else f"{name}#{counts[name]}"
        results[key] = contents[call_id]
    return results
