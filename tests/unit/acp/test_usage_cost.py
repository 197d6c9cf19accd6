"""ACP's ``usage_update``: the session's cost when its model has a price,
and the window learnt from the model's first refusal when none was known.

In process (the real agent on the real pipeline, the SDK client object,
the fake model server): a model of the price table is priced per call and
the sum carried cumulatively across prompts; the user config file's
``prices`` win over the table (another currency included) and a hostile
entry there is left out; a model with no price sends no cost; a model
whose window nobody knows sends no ``usage_update`` until its first "too
long" refusal, then one whose size is at most the real window.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities, UsageUpdate

from rhema_lsp.acp.agent import RhemaAcpAgent
from rhema_lsp.providers.prices import Price, parse_prices, price_of
from rhema_lsp.runs.settings import Settings
from tests.acp.client import RecordingClient
from tests.fakes.model_server import FakeModelServer, Reply, text_reply


async def _agent(fake: FakeModelServer, model: str, **more: Any) -> RhemaAcpAgent:
    settings = Settings.model_validate(
        {
            "provider": "custom",
            "protocol": "openai",
            "baseUrl": fake.base_url,
            "model": model,
            "mode": "ask",
            **more,
        }
    )
    agent = RhemaAcpAgent(settings)
    agent.on_connect(RecordingClient())
    no_fs = FileSystemCapabilities(read_text_file=False, write_text_file=False)
    await agent.initialize(protocol_version=1, client_capabilities=ClientCapabilities(fs=no_fs))
    return agent


def _usage(agent: RhemaAcpAgent) -> list[UsageUpdate]:
    client = agent.client
    assert isinstance(client, RecordingClient)
    return [u for _, u in client.updates if isinstance(u, UsageUpdate)]


async def _ask(agent: RhemaAcpAgent, session: str, text: str) -> None:
    answer = await agent.prompt(prompt=[text_block(text)], session_id=session)
    assert answer.stop_reason == "end_turn"


def test_the_price_table_and_the_users_prices() -> None:
    assert price_of("gpt-4.1-mini") == Price(0.4, 1.6)
    assert price_of("gpt-4.1") == Price(2.0, 8.0)
    assert price_of("anthropic/claude-sonnet-4-5") == Price(3.0, 15.0)
    assert price_of("qwen3-coder") is None and price_of("") is None
    mine = {"gpt-4.1": Price(1.0, 1.0, "EUR")}
    assert price_of("gpt-4.1-mini", mine) == Price(1.0, 1.0, "EUR")  # the user's prefix wins
    prices, problems = parse_prices(
        {
            "ok": {"input": 1, "output": 2.5},
            "negative": {"input": -1, "output": 1},
            "text": {"input": "1", "output": 1},
            "flag": {"input": True, "output": 1},
            "huge": {"input": 1e300, "output": 1},
            "money": {"input": 1, "output": 1, "currency": ["EUR"]},
            "list": [1, 2],
            "  ": {"input": 1, "output": 1},
        }
    )
    assert prices == {"ok": Price(1.0, 2.5)}
    assert len(problems) == 7
    assert parse_prices([]) == ({}, ["prices must be an object of model ids"])


async def test_a_priced_model_sends_the_sessions_cost_cumulatively(
    project: Path, fake: FakeModelServer
) -> None:
    fake.script(text_reply("One.", usage=(1000, 500)), text_reply("Two.", usage=(2000, 100)))
    agent = await _agent(fake, "gpt-4.1-mini", contextWindow=32000)
    try:
        session = (await agent.new_session(cwd=str(project))).session_id
        await _ask(agent, session, "first")
        first = _usage(agent)[-1]
        assert first.size == 32000 and first.cost is not None
        assert (first.cost.amount, first.cost.currency) == (0.0012, "USD")
        await _ask(agent, session, "second")
        second = _usage(agent)[-1]
        assert second.cost is not None and second.cost.amount == pytest.approx(0.00216)
    finally:
        await agent.shutdown()


async def test_the_users_price_wins_and_an_unpriced_model_sends_no_cost(
    project: Path, fake: FakeModelServer, tmp_path: Path
) -> None:
    config = tmp_path / "config" / "rhema-lsp" / "config.json"
    config.parent.mkdir(parents=True)
    prices = {"fake-model": {"input": 10, "output": 20, "currency": "EUR"}, "bad": 7}
    config.write_text(json.dumps({"prices": prices}))
    fake.script(text_reply("Priced.", usage=(100_000, 1_000)), text_reply("Free."))
    agent = await _agent(fake, "fake-model", contextWindow=32000)
    try:
        session = (await agent.new_session(cwd=str(project))).session_id
        await _ask(agent, session, "priced")
        cost = _usage(agent)[-1].cost
        assert cost is not None and (cost.amount, cost.currency) == (1.02, "EUR")
        config.write_text("{}")
        other = (await agent.new_session(cwd=str(project))).session_id
        before = len(_usage(agent))
        await _ask(agent, other, "unpriced")
        sent = _usage(agent)[before:]
        assert sent and all(u.cost is None for u in sent)
    finally:
        await agent.shutdown()


WINDOW = 5_000


def _long_answers(body: Any) -> Reply:
    first = body["messages"][0]["content"]
    if isinstance(first, str) and first.startswith("You summarise"):
        return text_reply("The user asked twice; the answers were long.")
    return text_reply("a" * 24_000)


async def test_an_unknown_window_is_learnt_from_the_first_refusal(project: Path) -> None:
    with FakeModelServer(wire="openai", context_window=WINDOW, responder=_long_answers) as fake:
        agent = await _agent(fake, "local-model")
        try:
            session = (await agent.new_session(cwd=str(project))).session_id
            await _ask(agent, session, "first")
            assert _usage(agent) == []  # nobody knows the window yet
            await _ask(agent, session, "second")
            assert fake.too_long >= 1
            sizes = [u.size for u in _usage(agent)]
            assert sizes and all(0 < size <= WINDOW for size in sizes)
        finally:
            await agent.shutdown()
