"""The fill-in-the-middle routes of the fake model server.

``POST .../completions`` (not ``/chat/completions``: OpenAI-compatible FIM,
DeepSeek's ``/beta/completions``, Mistral's ``/fim/completions``) and
Ollama's ``POST /api/generate`` answer the next scripted text reply whole,
in the route's shape; a fake made with ``fim=False`` answers them 404, as a
chat-only server does (no reply is used up).
"""

from __future__ import annotations

import json

from tests.fakes.wire import Reply

__all__ = ["fim_answer", "is_fim"]


def is_fim(path: str) -> bool:
    """Whether ``path`` is a FIM route."""
    route = path.split("?", 1)[0].rstrip("/")
    return route.endswith("/api/generate") or (
        route.endswith("/completions") and not route.endswith("/chat/completions")
    )


def fim_answer(path: str, reply: Reply) -> tuple[int, bytes]:
    """The status and JSON body answering ``reply`` on the FIM route ``path``."""
    if reply.kind == "error":
        return reply.status, json.dumps({"error": {"message": reply.body}}).encode()
    if path.rstrip("/").endswith("/api/generate"):
        return 200, json.dumps({"response": reply.text, "done": True}).encode()
    body = {
        "object": "text_completion",
        "choices": [{"index": 0, "text": reply.text, "finish_reason": "stop"}],
    }
    return 200, json.dumps(body).encode()
