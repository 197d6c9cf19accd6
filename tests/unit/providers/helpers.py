"""Shared test helpers: a recording sink, a fake sleep, and adapters wired to a fake."""

from __future__ import annotations

from typing import Any

from rhema_lsp.engine import Event, Message, ModelRequest, ToolSpec
from rhema_lsp.providers import RetryPolicy, Secret, build_http_provider
from rhema_lsp.providers.transport import HttpStreamProvider
from tests.fakes.model_server import FakeModelServer


class Recorder:
    """An event sink that keeps every event."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [event.type for event in self.events]

    def of(self, kind: type[Any]) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]


class FakeSleep:
    """Records the delays the retry ladder asks for, without waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def adapter(
    server: FakeModelServer,
    *,
    key: str | None = None,
    attempts: int = 4,
    sleep: FakeSleep | None = None,
    stall_timeout: float = 120.0,
    name: str = "test",
    now: float = 1_000_000.0,
) -> HttpStreamProvider:
    """The wire adapter for ``server``; zero jitter (multiplier 1.0), fixed clock."""
    return build_http_provider(
        server.wire,
        name=name,
        base_url=server.base_url,
        model="fake-model",
        key=Secret(key) if key else None,
        stall_timeout=stall_timeout,
        retry=RetryPolicy(
            attempts=attempts,
            sleep=sleep if sleep is not None else FakeSleep(),
            jitter=lambda: 0.5,
            now=lambda: now,
        ),
    )


def ask(text: str = "hi", **kwargs: Any) -> ModelRequest:
    """A one-message request."""
    return ModelRequest(messages=[Message.user(text)], **kwargs)


READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
