"""The door kit itself (:mod:`rhema_lsp.runs.door`): the run is registered
before its turn is decided (a refused start stores nothing, a failed one
leaves nothing registered), the provider cache resolves each provider once,
and shutdown stops everything in its one order, once."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.engine import ProviderError
from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.runs.backends import Backends
from rhema_lsp.runs.door import Door
from rhema_lsp.runs.registry import SessionRunningError
from rhema_lsp.runs.settings import Settings
from rhema_lsp.runs.workplace import Plan
from rhema_lsp.sessions import SessionStore, UnknownSessionError


@dataclass(frozen=True)
class Wanted:
    model: str | None
    base_url: str | None


@dataclass
class FakeBackend:
    model: str
    provider: Any = None
    protocol: str = "openai"
    context_window: int | None = None


class Resolver:
    def __init__(self) -> None:
        self.asked: list[Wanted] = []
        self.fail = False

    async def __call__(self, wanted: Wanted) -> FakeBackend:
        self.asked.append(wanted)
        await asyncio.sleep(0.01)  # callers at the same time arrive meanwhile
        if self.fail:
            raise ProviderError("no provider")
        return FakeBackend(wanted.model or "default-model")


def _key(settings: Settings) -> Wanted:
    return Wanted(settings.model, settings.base_url)


def _door(resolver: Resolver | None = None) -> Door[Wanted, FakeBackend]:
    return Door(McpHub(), Backends(_key, resolver or Resolver()))


def _plan(prompt: str | None) -> Plan:
    return Plan(prompt=prompt, title=prompt or "", mode="ask", max_steps=3)


async def test_a_start_refused_as_busy_reserves_no_turn_and_a_failed_one_registers_nothing(
    tmp_path: Path,
) -> None:
    door = _door()
    store = await SessionStore.open(tmp_path)
    try:
        first = await door.start(store, None, _plan("one"))
        session = first.session
        with pytest.raises(SessionRunningError):
            await door.start(store, session, _plan("refused"))
        assert (await store.info(session)).turns == 1
        door.end(first)

        second = await door.start(store, session, _plan("two"))
        assert second.turn == 2
        door.end(second)

        with pytest.raises(UnknownSessionError):
            await door.start(store, "nope", _plan("lost"))
        assert not door.runs.is_running("nope")
    finally:
        await store.close()


async def test_each_provider_is_resolved_once_and_a_failure_is_not_kept() -> None:
    resolver = Resolver()
    backends = _door(resolver).backends
    settings = Settings()

    together = await asyncio.gather(*[backends.of(settings) for _ in range(5)])
    chosen = await backends.of(settings, "other")
    again = await backends.of(settings, "other")
    own = await backends.of(settings, "default-model")

    assert all(b is together[0] for b in together) and own is together[0]
    assert chosen is again and chosen.model == "other"
    assert resolver.asked == [_key(settings), replace(_key(settings), model="other")]

    moved = Settings.model_validate({"baseUrl": "http://localhost:1/v1"})
    resolver.fail = True
    with pytest.raises(ProviderError):
        await backends.of(moved)
    resolver.fail = False
    assert (await backends.of(moved)).model == "default-model"
    assert resolver.asked[-2:] == [_key(moved), _key(moved)]


async def test_shutdown_stops_in_one_order_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    door = _door()
    order: list[str] = []
    store = await door.stores.of(tmp_path, "workspace")
    run = await door.start(store, None, _plan("one"))

    async def stop_all(wait: float = 0) -> None:
        order.append("runs")
        door.end(run)

    async def tasks() -> None:
        order.append("tasks")

    class Languages:
        async def aclose(self) -> None:
            order.append("languages")

    async def mcp_close() -> None:
        order.append("mcp")

    real_close = store.close

    async def store_close() -> None:
        order.append("stores")
        await real_close()

    monkeypatch.setattr(door.runs, "stop_all", stop_all)
    monkeypatch.setattr(door.mcp, "aclose", mcp_close)
    monkeypatch.setattr(store, "close", store_close)

    await door.shutdown(tasks=tasks, languages=[Languages()])
    await door.shutdown(tasks=tasks, languages=[Languages()])

    assert order == ["runs", "tasks", "mcp", "languages", "stores"]
    assert door.stores.opened() == []
