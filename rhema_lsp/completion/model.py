"""The completion model: which model completes, and one request to it.

The provider is chosen like the chat's (:func:`choose_provider`, the same
settings, keys and origins rules), from the ``completion*`` settings laid
over the chat's (:class:`CompletionConfig`), once per configuration. A
model is asked for the middle on its FIM wire (:mod:`.wires`); after a
:class:`~.wires.NoFim` it is asked through a chat prompt from then on (the
chat wires: OpenAI-compatible, Anthropic, Gemini, and the embedded demo
model, through the engine's :class:`ModelProvider`). One HTTP client serves
every request (connections kept alive: the server adds little over a direct
call) and is closed with :meth:`CompletionModel.aclose`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from rhema_lsp.completion.wires import (
    CHAT_SYSTEM,
    Endpoint,
    FimError,
    NoFim,
    chat_prompt,
    fim,
    fim_wire,
    strip_fence,
)
from rhema_lsp.engine import ChatParams, Message, ModelRequest, Role, TextPart
from rhema_lsp.engine.events import Event
from rhema_lsp.providers.choices import ProviderChoice, ProviderSettings, ResolvedProvider
from rhema_lsp.providers.resolve import build_provider, choose_provider
from rhema_lsp.providers.retry import RetryPolicy

__all__ = ["CompletionConfig", "CompletionModel", "ModelUnavailable"]

TIMEOUT = httpx.Timeout(20.0, connect=5.0)


class ModelUnavailable(Exception):
    """No completion now: the provider is not set up, or the request failed."""


@dataclass(frozen=True)
class CompletionConfig:
    """What the completion model is chosen from."""

    provider: ProviderSettings
    max_tokens: int = 128


class _Quiet:
    """The sink of a chat fallback: its deltas are not shown anywhere."""

    def emit(self, event: Event) -> None:
        return


class CompletionModel:
    """The model that completes, chosen lazily from a :class:`CompletionConfig`."""

    def __init__(self, config: CompletionConfig) -> None:
        self.config = config
        self.requests = 0
        """Requests sent to the model so far."""
        self._choice: ProviderChoice | None = None
        self._chat: ResolvedProvider | None = None
        self._no_fim = False
        self._lock = asyncio.Lock()
        self._client: httpx.AsyncClient | None = None

    async def choice(self) -> ProviderChoice:
        """The provider that completes (chosen on first use, then kept)."""
        async with self._lock:
            if self._choice is None:
                try:
                    self._choice = await choose_provider(self.config.provider)
                except Exception as exc:  # noqa: BLE001 -- any setup failure means no completion
                    raise ModelUnavailable(str(exc)) from None
            return self._choice

    def describe(self) -> str | None:
        """Which model completes, and how (``None`` before the first request)."""
        if self._choice is None:
            return None
        wire = "chat" if self._no_fim else fim_wire(*self._wire_of(self._choice))
        how = "a chat prompt" if wire == "chat" else f"fill-in-the-middle ({wire})"
        demo = ", a demo" if self._choice.protocol == "embedded" else ""
        return f"{self._choice.model} ({self._choice.name}) through {how}{demo}"

    @staticmethod
    def _wire_of(choice: ProviderChoice) -> tuple[str, str, str]:
        return choice.name, choice.protocol, choice.base_url

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=TIMEOUT, trust_env=False)
        return self._client

    async def middle(self, prompt: str, suffix: str, multiline: bool) -> str:
        """The model's text between ``prompt`` and ``suffix``."""
        choice = await self.choice()
        wire = fim_wire(*self._wire_of(choice))
        stop = [] if multiline else ["\n"]
        if wire != "chat" and not self._no_fim:
            endpoint = Endpoint(wire, choice.base_url, choice.model, choice.key)
            self.requests += 1
            try:
                return await fim(
                    self._http(),
                    endpoint,
                    prompt,
                    suffix,
                    max_tokens=self.config.max_tokens,
                    stop=stop,
                )
            except NoFim:
                self._no_fim = True
            except FimError as exc:
                raise ModelUnavailable(str(exc)) from None
        answer = await self.chat(CHAT_SYSTEM, chat_prompt(prompt, suffix, multiline))
        return strip_fence(answer)

    async def raw(self, prompt: str, *, max_tokens: int) -> str | None:
        """``prompt`` continued on the FIM wire (no suffix): ``None`` when the
        model has no such wire (ask :meth:`chat`)."""
        choice = await self.choice()
        wire = fim_wire(*self._wire_of(choice))
        if wire == "chat" or self._no_fim:
            return None
        endpoint = Endpoint(wire, choice.base_url, choice.model, choice.key)
        self.requests += 1
        try:
            return await fim(self._http(), endpoint, prompt, "", max_tokens=max_tokens, stop=[])
        except NoFim:
            return None
        except FimError as exc:
            raise ModelUnavailable(str(exc)) from None

    async def chat(self, system: str, user: str, *, max_tokens: int | None = None) -> str:
        """One chat exchange with the completion model, its text back."""
        choice = await self.choice()
        if self._chat is None:
            try:
                self._chat = build_provider(choice, self.config.provider, RetryPolicy(attempts=1))
            except Exception as exc:  # noqa: BLE001 -- any setup failure means no completion
                raise ModelUnavailable(str(exc)) from None
        request = ModelRequest(
            system=system,
            messages=[Message(role=Role.USER, content=[TextPart(text=user)])],
            params=ChatParams(
                model=choice.model, temperature=0, max_tokens=max_tokens or self.config.max_tokens
            ),
        )
        self.requests += 1
        try:
            output = await self._chat.provider.complete(request, _Quiet())
        except Exception as exc:  # noqa: BLE001 -- the provider's failure means no completion
            raise ModelUnavailable(str(exc)) from None
        return "".join(part.text for part in output.message.content if isinstance(part, TextPart))

    async def aclose(self) -> None:
        """Close the HTTP client (connections end)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
