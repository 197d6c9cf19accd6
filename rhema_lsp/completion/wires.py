"""The fill-in-the-middle wires: one request, the middle back.

Which wire an endpoint speaks is decided from where it is
(:func:`fim_wire`): Ollama (its preset, or its port 11434) through its
native ``POST /api/generate`` with ``suffix``; Mistral's Codestral
(``*.mistral.ai``) through ``POST /v1/fim/completions``; DeepSeek through
its beta ``POST /beta/completions``; every other OpenAI-compatible server
(llama.cpp, vLLM, LM Studio, hosted ones) through ``POST <baseUrl>/completions``
with ``prompt`` (ending exactly at the cursor) and ``suffix`` (starting right
after it). A server that has no FIM answers 404 (or 400/405/501 naming an
unknown route or field): :class:`NoFim`, and the model asks a chat prompt
for the middle instead (:func:`chat_prompt`). Answers are read whole, not
streamed: a completion is short, and a cancelled request closes its
connection, which aborts it on the server. A key goes only in the header of
its own endpoint's request (the choice was checked by
:func:`~rhema_lsp.providers.resolve.choose_provider`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from rhema_lsp.providers.secrets import Secret, origin_of

__all__ = ["Endpoint", "FimError", "FimWire", "NoFim", "chat_prompt", "fim", "fim_wire"]

FimWire = Literal["openai", "ollama", "mistral", "deepseek", "chat"]

_NO_FIM_STATUS = (404, 405, 501)


class FimError(Exception):
    """A FIM request failed (the status and the server's words, never a key)."""


class NoFim(FimError):
    """The endpoint has no FIM route: ask a chat prompt instead."""


@dataclass(frozen=True)
class Endpoint:
    """Where completions are asked: the wire, the base URL, the model, the key."""

    wire: FimWire
    base_url: str
    model: str
    key: Secret | None = field(default=None, repr=False)


def fim_wire(name: str, protocol: str, base_url: str) -> FimWire:
    """The FIM wire of the provider ``name`` speaking ``protocol`` at ``base_url``."""
    if protocol != "openai":
        return "chat"
    host = (urlsplit(base_url).hostname or "").lower()
    if name == "ollama" or origin_of(base_url).endswith(":11434"):
        return "ollama"
    if host.endswith("mistral.ai"):
        return "mistral"
    if host.endswith("deepseek.com"):
        return "deepseek"
    return "openai"


def _url(endpoint: Endpoint) -> str:
    base = endpoint.base_url.rstrip("/")
    origin = f"{urlsplit(base).scheme}://{urlsplit(base).netloc}"
    if endpoint.wire == "ollama":
        return f"{origin}/api/generate"
    if endpoint.wire == "mistral":
        return f"{origin}/v1/fim/completions"
    if endpoint.wire == "deepseek":
        return f"{origin}/beta/completions"
    return f"{base}/completions"


def _body(
    endpoint: Endpoint, prompt: str, suffix: str, max_tokens: int, stop: list[str]
) -> dict[str, Any]:
    if endpoint.wire == "ollama":
        options: dict[str, Any] = {"num_predict": max_tokens, "temperature": 0}
        if stop:
            options["stop"] = stop
        return {
            "model": endpoint.model,
            "prompt": prompt,
            "suffix": suffix,
            "stream": False,
            "options": options,
        }
    body: dict[str, Any] = {
        "model": endpoint.model,
        "prompt": prompt,
        "suffix": suffix,
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": False,
    }
    if stop:
        body["stop"] = stop
    return body


def _text(wire: FimWire, answer: Any) -> str:
    if not isinstance(answer, dict):
        raise FimError("the completion answer is not a JSON object")
    if wire == "ollama":
        text = answer.get("response")
    else:
        choices = answer.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else {}
        text = first.get("text") if isinstance(first, dict) else None
        if text is None and isinstance(first, dict):  # Mistral answers as a chat message
            message = first.get("message")
            text = message.get("content") if isinstance(message, dict) else None
    if not isinstance(text, str):
        raise FimError("the completion answer holds no text")
    return text


async def fim(
    client: httpx.AsyncClient,
    endpoint: Endpoint,
    prompt: str,
    suffix: str,
    *,
    max_tokens: int,
    stop: list[str],
) -> str:
    """The model's middle between ``prompt`` and ``suffix``.

    Raises
    ------
    NoFim
        The endpoint has no FIM route (or does not take ``suffix``).
    FimError
        Any other failure.
    """
    headers = {"content-type": "application/json"}
    if endpoint.key is not None:
        headers["authorization"] = f"Bearer {endpoint.key.reveal()}"
    try:
        response = await client.post(
            _url(endpoint),
            json=_body(endpoint, prompt, suffix, max_tokens, stop),
            headers=headers,
        )
    except httpx.HTTPError as exc:
        raise FimError(f"the completion request failed: {type(exc).__name__}") from None
    if response.status_code in _NO_FIM_STATUS:
        raise NoFim(f"{response.status_code}: no fill-in-the-middle at this endpoint")
    if response.status_code == 400 and "suffix" in response.text.lower():
        raise NoFim("400: this model does not take a suffix")
    if response.status_code >= 400:
        raise FimError(f"the completion request answered {response.status_code}")
    try:
        answer = response.json()
    except ValueError:
        raise FimError("the completion answer is not JSON") from None
    return _text(endpoint.wire, answer)


CHAT_SYSTEM = (
    "You complete code. You are given the code before the cursor and the code after it. "
    "Answer with only the code that goes at the cursor: no explanation, no code fence, "
    "nothing that is already before or after the cursor."
)


def chat_prompt(prompt: str, suffix: str, multiline: bool) -> str:
    """The user message of a chat model asked for the middle."""
    what = "a few lines at most" if multiline else "the rest of the line only"
    return (
        f"<before_cursor>\n{prompt}</before_cursor>\n"
        f"<after_cursor>{suffix}\n</after_cursor>\n"
        f"Write the code that goes at the cursor ({what})."
    )


def strip_fence(text: str) -> str:
    """A chat model's answer without the code fence it may put around it."""
    stripped = text.strip("\n")
    if stripped.startswith("```"):
        lines = stripped.split("\n")[1:]
        if lines and lines[-1].strip().startswith("```"):
            lines = lines[:-1]
        return "\n".join(lines)
    return text
