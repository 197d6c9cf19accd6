"""The door kit through the LSP door, in process (the real server on a
loopback transport): a prompt refused because its session is busy reserves
no turn number, however many are refused together, and commands arriving
together on a folder open its store once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from rhema_lsp.sessions import SessionStore
from tests.fakes.model_server import FakeModelServer, text_reply
from tests.unit.server.loopback import LONG, Loopback, kept_logging, settings, start, stop


async def _turns_of(client: Loopback, session: str) -> int:
    [summary] = [s for s in await client.command("rhema.sessions", {}) if s["session"] == session]
    return int(summary["turns"])


def _streaming(client: Loopback, turn: int) -> bool:
    return any(e["event"]["type"] == "text_delta" and e["turn"] == turn for e in client.events())


async def test_a_prompt_refused_as_busy_reserves_no_turn_number(
    client: Loopback, fake: FakeModelServer
) -> None:
    fake.script(text_reply("One."), text_reply(LONG, chunk=5, delay=0.002), text_reply("Three."))
    first = await client.command("rhema.turn", {"prompt": "one"})
    session = first["session"]
    running = asyncio.ensure_future(
        client.command("rhema.turn", {"prompt": "two", "session": session}, "turn-2")
    )
    await client.wait_for(lambda: _streaming(client, 2))

    with pytest.raises(RuntimeError, match="already running a turn"):
        await client.command("rhema.turn", {"prompt": "refused", "session": session})
    assert await _turns_of(client, session) == 2  # the refused prompt took no number

    client.notify("$/cancelRequest", {"id": "turn-2"})
    assert (await asyncio.wait_for(running, 10))["turn"] == 2
    third = await client.command("rhema.turn", {"prompt": "three", "session": session})

    assert third["turn"] == 3  # 1, 2, 3: no gap
    assert await _turns_of(client, session) == 3


async def test_concurrent_prompts_refused_together_leave_the_count_equal_to_the_prompts_run(
    client: Loopback, fake: FakeModelServer
) -> None:
    fake.script(text_reply("First."), *[text_reply("Again.", chunk=2, delay=0.01)] * 10)
    session = (await client.command("rhema.turn", {"prompt": "first"}))["session"]

    asked = [
        client.command("rhema.turn", {"prompt": f"prompt {n}", "session": session})
        for n in range(10)
    ]
    answers = await asyncio.gather(*asked, return_exceptions=True)

    ran = [answer for answer in answers if isinstance(answer, dict)]
    refused = [answer for answer in answers if isinstance(answer, Exception)]
    assert ran and refused  # one at a time: the others were refused
    assert all("already running a turn" in str(error) for error in refused)
    assert sorted(answer["turn"] for answer in ran) == list(range(2, 2 + len(ran)))
    assert await _turns_of(client, session) == 1 + len(ran)


async def test_first_commands_arriving_together_open_the_folders_store_once(
    folder: Path, fake: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = SessionStore.open
    opened: list[Path] = []

    async def slow_open(where: Path, **options: Any) -> SessionStore:
        opened.append(where)
        await asyncio.sleep(0.05)  # the other commands arrive meanwhile
        return await real_open(where, **options)

    monkeypatch.setattr(SessionStore, "open", slow_open)
    fake.script(text_reply("Hello."))
    with kept_logging():
        client = await start(folder, settings(fake))
        try:
            answers = await asyncio.gather(
                client.command("rhema.turn", {"prompt": "hi"}),
                *[client.command("rhema.sessions", {}) for _ in range(4)],
            )
        finally:
            await stop(client)

    assert opened == [folder]
    assert answers[0]["turn"] == 1
