"""How many tokens a model's context window holds.

Hosted models: a table of the known model families (:data:`KNOWN_WINDOWS`,
longest prefix wins, an ``vendor/`` prefix as OpenRouter spells ids is
ignored). Local servers say it themselves, asked with GETs on loopback
within a short timeout: llama.cpp's ``/props``
(``default_generation_settings.n_ctx``), LM Studio's ``/api/v0/models``
(``loaded_context_length``), an OpenAI-compatible ``/models`` entry
(vLLM's ``max_model_len``, OpenRouter's ``context_length``, llama.cpp's and
llama-cpp-python's ``meta.n_ctx``/``n_ctx_train``), and for Ollama, its
``/api/show`` (the model's ``num_ctx`` parameter, else Ollama's default of
:data:`OLLAMA_DEFAULT_CTX`, which it uses whatever the model could hold).
The embedded model's window is its ``n_ctx``. ``None`` means unknown: the
session then learns the window from the first "too long" error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx

__all__ = ["KNOWN_WINDOWS", "OLLAMA_DEFAULT_CTX", "known_window", "probe_window"]

KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude-", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-", 1_048_576),
    ("llama-3.3-70b", 131_072),
    ("llama-3.1-8b", 131_072),
    ("deepseek-", 128_000),
    ("qwen3", 131_072),
    ("SmolLM2-", 2_048),
)
"""Context windows by model-id prefix, for the presets' models and their kin."""

OLLAMA_DEFAULT_CTX = 4_096
"""The window Ollama runs a model with unless its ``num_ctx`` says otherwise."""

PROBE_TIMEOUT = 1.0
"""Seconds each local probe may take."""


def known_window(model: str) -> int | None:
    """The window of ``model`` from :data:`KNOWN_WINDOWS`, or ``None``."""
    name = model.rsplit("/", 1)[-1].lower()
    best: tuple[int, int] | None = None
    for prefix, window in KNOWN_WINDOWS:
        if name.startswith(prefix.lower()) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), window)
    return best[1] if best is not None else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def _get(client: httpx.AsyncClient, url: str) -> Any:
    try:
        response = await client.get(url)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def _llamacpp(props: Any) -> int | None:
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    return _int(settings.get("n_ctx")) if isinstance(settings, dict) else _int(props.get("n_ctx"))


def _entry(listing: Any, model: str) -> dict[str, Any] | None:
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return None
    for item in data:
        if isinstance(item, dict) and item.get("id") == model:
            return item
    return None


def _lmstudio(listing: Any, model: str) -> int | None:
    entry = _entry(listing, model)
    if entry is None:
        return None
    return _int(entry.get("loaded_context_length")) or _int(entry.get("max_context_length"))


def _openai_models(listing: Any, model: str) -> int | None:
    entry = _entry(listing, model)
    if entry is None:
        return None
    found = entry.get("meta")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    return (
        _int(entry.get("max_model_len"))
        or _int(entry.get("context_length"))
        or _int(meta.get("n_ctx"))
        or _int(meta.get("n_ctx_train"))
    )


def _ollama(show: Any) -> int | None:
    if not isinstance(show, dict):
        return None
    for line in str(show.get("parameters") or "").splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == "num_ctx" and fields[1].isdigit():
            return int(fields[1])
    return OLLAMA_DEFAULT_CTX


async def _ollama_show(client: httpx.AsyncClient, root: str, model: str) -> int | None:
    try:
        response = await client.post(f"{root}/api/show", json={"model": model})
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return _ollama(json.loads(response.content))
    except ValueError:
        return None


async def probe_window(
    base_url: str, model: str, *, ollama: bool = False, wait: float = PROBE_TIMEOUT
) -> int | None:
    """Ask the local OpenAI-compatible server at ``base_url`` how big the
    window of ``model`` is; ``None`` when it does not say.

    Parameters
    ----------
    base_url
        The server's OpenAI-compatible base (``http://127.0.0.1:8080/v1``).
    model
        The model the requests will name.
    ollama
        The server is Ollama: ask ``/api/show`` (a POST, so only then).
    wait
        Seconds each probe may take.
    """
    base = base_url.rstrip("/")
    root = base.removesuffix("/v1")
    async with httpx.AsyncClient(timeout=wait, trust_env=False) as client:
        if ollama:
            return await _ollama_show(client, root, model)
        readers: list[tuple[str, Callable[[Any], int | None]]] = [
            (f"{root}/props", _llamacpp),
            (f"{root}/api/v0/models", lambda value: _lmstudio(value, model)),
            (f"{base}/models", lambda value: _openai_models(value, model)),
        ]
        found: list[int | None] = [None] * len(readers)

        async def probe(rank: int, url: str, read: Callable[[Any], int | None]) -> None:
            value = await _get(client, url)
            found[rank] = read(value) if value is not None else None

        async with anyio.create_task_group() as group:
            for rank, (url, read) in enumerate(readers):
                group.start_soon(probe, rank, url, read)
    return next((window for window in found if window is not None), None)
