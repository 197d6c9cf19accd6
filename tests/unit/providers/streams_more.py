"""Gemini's and the OpenAI wire's streams in the shapes real servers send
(see :mod:`tests.unit.providers.streams`): Gemini's signed text parts (an
empty last one included), code execution parts and cached tokens; Mistral's
``content`` as an array of parts and OpenAI's cached prompt tokens. Ids,
signatures and texts are invented. ``CASES`` holds every wire's cases.
"""

from __future__ import annotations

from typing import Any

from tests.unit.providers.streams import ANTHROPIC_CASES, Case, _data

__all__ = ["CASES"]


def _gemini(parts: list[dict[str, Any]], finish: str | None = None, **usage: int) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 9, **usage},
        "modelVersion": "gemini-3-x",
    }


GEMINI_SIGNED_EMPTY = Case(
    name="gemini-signed-empty-last-part",
    wire="gemini",
    body=_data(
        _gemini([{"text": "There are **3**"}], candidatesTokenCount=4),
        _gemini([{"text": " r's."}], candidatesTokenCount=8, thoughtsTokenCount=150),
        _gemini(
            [{"text": "", "thoughtSignature": "EqsFsig"}],
            "STOP",
            candidatesTokenCount=8,
            thoughtsTokenCount=200,
            cachedContentTokenCount=4,
        ),
    ),
    text="There are **3** r's.",
    usage=(9, 208, 4, 0),
    text_signatures=("EqsFsig",),
)

GEMINI_SIGNED_FIRST = Case(
    name="gemini-thoughts-then-signed-answer",
    wire="gemini",
    body=_data(
        _gemini([{"text": "**Weighing it**", "thought": True}]),
        _gemini([{"text": " up.", "thought": True}]),
        _gemini([{"text": "Short answer", "thoughtSignature": "CsUBsig"}]),
        _gemini([{"text": ": yes."}]),
        _gemini([{"text": ""}], "STOP", candidatesTokenCount=5, thoughtsTokenCount=20),
    ),
    text="Short answer: yes.",
    reasoning="**Weighing it** up.",
    usage=(9, 25, 0, 0),
    text_signatures=("CsUBsig",),
)

GEMINI_CODE = Case(
    name="gemini-code-execution",
    wire="gemini",
    body=_data(
        _gemini(
            [
                {
                    "executableCode": {"language": "PYTHON", "code": "print(6 * 7)", "id": "x1"},
                    "thoughtSignature": "EqADsig",
                },
                {"text": ""},
            ],
            candidatesTokenCount=10,
        ),
        _gemini([{"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n", "id": "x1"}}]),
        _gemini([{"text": "It is 42."}]),
        _gemini(
            [{"text": "", "thoughtSignature": "EoECsig"}],
            "STOP",
            candidatesTokenCount=30,
            thoughtsTokenCount=7,
        ),
    ),
    text="It is 42.",
    usage=(9, 37, 0, 0),
    provider_kinds=("executableCode", "codeExecutionResult"),
    provider_tools=(("x1", "code_execution", "print(6 * 7)"),),
    text_signatures=("EoECsig",),
)


def _openai(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


MISTRAL_PARTS = Case(
    name="mistral-content-parts",
    wire="openai",
    body=_data(
        _openai({"role": "assistant", "content": ""}),
        _openai({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Two"}]}]}),
        _openai(
            {
                "content": [
                    {"type": "thinking", "thinking": [{"type": "text", "text": " plus two."}]}
                ]
            }
        ),
        _openai({"content": [{"type": "text", "text": "Four"}]}),
        _openai({"content": "."}),
        _openai({}, "stop"),
        {
            "id": "cmpl-1",
            "choices": [],
            "usage": {
                "prompt_tokens": 1200,
                "completion_tokens": 9,
                "prompt_tokens_details": {"cached_tokens": 1024},
            },
        },
        done=True,
        comment="OPENROUTER PROCESSING",
    ),
    text="Four.",
    reasoning="Two plus two.",
    usage=(1200, 9, 1024, 0),
)

CASES = (*ANTHROPIC_CASES, GEMINI_SIGNED_EMPTY, GEMINI_SIGNED_FIRST, GEMINI_CODE, MISTRAL_PARTS)
