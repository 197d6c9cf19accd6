"""Context cost: what prompt caching saves, and what compaction costs.

**Caching.** A scripted 30-step agent turn (the real engine, the real
Anthropic adapter, the agent-mode tool specs and system prompt) in which a
command's output grows every step, against a fake Anthropic server that
bills like the API: a request's prefix up to a ``cache_control`` breakpoint
is written to the cache (1.25x), a later request starting with a written
prefix reads it (0.1x), the rest is plain input (1x). Tokens are bytes / 4.
The figure is the billed-equivalent input tokens of the turn, read from the
``usage`` the adapter reports, against the same requests billed without a
cache; the ratio targets <= 0.35.

**Compaction.** 100 turns (every third one reads a file) against a fake
OpenAI-compatible model with an 8,000-token window, through the real engine:
the extra model calls compaction makes per 100 turns, when the window is
known (a local server's report) and when it is learnt from the model's "too
long" refusals (those refusals counted as calls too). No turn may fail.

Run ``python -m bench.context_cost``.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from pathlib import Path
from typing import Any

import anyio

from rhema_lsp.engine import (
    Agent,
    AgentError,
    ContextBudget,
    Event,
    Message,
    ReplaySafety,
    Session,
    StepEnd,
    ToolCall,
    ToolContext,
    ToolResolver,
    ToolResult,
    ToolSpec,
    Usage,
    run_turn,
)
from rhema_lsp.providers import RetryPolicy, build_http_provider
from rhema_lsp.runs.prompts import system_prompt
from rhema_lsp.tools.specs import specs_for
from tests.fakes.model_server import TOKEN_BYTES, FakeModelServer, Reply, text_reply, tool_reply

Row = tuple[str, float, float | None, float | None, str]

STEPS = 30
TURNS = 100
WINDOW = 8_000
READ, WRITE = 0.1, 1.25


def _tokens(data: bytes) -> int:
    return math.ceil(len(data) / TOKEN_BYTES)


class AnthropicCache:
    """Bills requests as Anthropic's prompt cache does, by prefix of blocks."""

    def __init__(self) -> None:
        self.written: set[bytes] = set()
        self.lock = threading.Lock()

    @staticmethod
    def blocks(body: dict[str, Any]) -> list[tuple[bytes, bool]]:
        """The request as the cache sees it: tools, system, then every
        message's blocks, each with whether it is a breakpoint."""
        out: list[tuple[bytes, bool]] = []

        def add(block: dict[str, Any], prefix: str = "") -> None:
            marked = "cache_control" in block
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            out.append(((prefix + json.dumps(plain, sort_keys=True)).encode(), marked))

        for tool in body.get("tools", []):
            add(tool)
        for block in body.get("system", []):
            add(block)
        for message in body["messages"]:
            for number, block in enumerate(message["content"]):
                add(block, message["role"] if number == 0 else "")
        return out

    def usage(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """``(input, cache read, cache write)`` of one request, in tokens."""
        blocks = self.blocks(body)
        digest = hashlib.sha256()
        prefixes: list[bytes] = []
        totals: list[int] = []
        running = 0
        for data, _ in blocks:
            digest.update(data)
            prefixes.append(digest.copy().digest())
            running += _tokens(data)
            totals.append(running)
        marks = [index for index, (_, marked) in enumerate(blocks) if marked]
        if not marks:
            return running, 0, 0
        with self.lock:
            hit = next((i for i in range(marks[-1], -1, -1) if prefixes[i] in self.written), None)
            for index in marks:
                self.written.add(prefixes[index])
        read = totals[hit] if hit is not None else 0
        return running, read, totals[marks[-1]] - read


class GrowingOutput(ToolResolver):
    """``run_command`` whose output grows by ~1 KB a step (a build log)."""

    def __init__(self) -> None:
        self.calls = 0

    def specs(self) -> list[ToolSpec]:
        return specs_for("agent")

    def replay_safety(self, name: str) -> ReplaySafety:
        return ReplaySafety.UNSAFE

    async def resolve(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        self.calls += 1
        lines = [f"test_case_{n:04d} ... ok ({n * 7 % 13} ms)" for n in range(25 * self.calls)]
        return ToolResult.success(call.id, "\n".join(lines), code=0)


class _Steps:
    def __init__(self) -> None:
        self.usages: list[Usage] = []

    def emit(self, event: Event) -> None:
        if isinstance(event, StepEnd):
            self.usages.append(event.usage)


def _no_retry() -> RetryPolicy:
    async def sleep(seconds: float) -> None:
        del seconds

    return RetryPolicy(attempts=1, sleep=sleep)


async def _caching() -> list[Row]:
    cache = AnthropicCache()

    def respond(body: Any) -> Reply:
        total, read, write = cache.usage(body)
        steps = sum(1 for m in body["messages"] if m["role"] == "assistant")
        reply = (
            tool_reply(("run_command", {"command": "pytest -q"}))
            if steps < STEPS - 1
            else text_reply("All tests pass.")
        )
        return Reply(**{**reply.__dict__, "usage": (total, 20), "cache": (read, write)})

    with FakeModelServer(wire="anthropic", responder=respond) as server:
        provider = build_http_provider(
            "anthropic",
            name="anthropic",
            base_url=server.base_url,
            model="claude-sonnet-4-5",
            key=None,
            retry=_no_retry(),
        )
        agent = Agent(
            provider, resolver=GrowingOutput(), system=system_prompt("agent", Path("/work/app"))
        )
        steps = _Steps()
        prompt = Message.user("Run the tests until they pass, fixing what fails.")
        await run_turn(agent, Session(), prompt, steps, ToolContext(), STEPS)
    total = sum(u.input for u in steps.usages)
    read = sum(u.cache_read for u in steps.usages)
    write = sum(u.cache_write for u in steps.usages)
    billed = (total - read - write) + READ * read + WRITE * write
    return [
        (
            f"{STEPS}-step turn: billed input tokens, cached (vs uncached)",
            billed,
            float(total),
            billed / total,
            "ratio <= 0.35",
        ),
        ("  of which cache reads (0.1x)", float(read), None, None, ""),
        ("  of which cache writes (1.25x)", float(write), None, None, ""),
    ]


def _answer(body: Any) -> Reply:
    messages = body["messages"]
    if str(messages[0]["content"]).startswith("You summarise"):
        return text_reply("The user sent numbered requests; each was answered.")
    last = messages[-1]
    if last["role"] == "tool":
        return text_reply("Read it. " + "r" * 300)
    number = int(str(last["content"]).split(":", 1)[0].rsplit(" ", 1)[-1])
    if number % 3 == 0:
        return tool_reply(("read_file", {"path": "app.py"}))
    return text_reply(f"Answer {number}. " + "a" * 600)


class _FileReader(ToolResolver):
    def specs(self) -> list[ToolSpec]:
        return specs_for("ask")

    def replay_safety(self, name: str) -> ReplaySafety:
        return ReplaySafety.SAFE

    async def resolve(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        return ToolResult.success(call.id, "def main():\n    print('hi')\n" * 20)


async def _compaction(known: bool) -> tuple[int, int, int, int]:
    """(model calls, summary calls, too-long refusals, failed turns) of 100 turns."""
    with FakeModelServer(wire="openai", context_window=WINDOW, responder=_answer) as server:
        provider = build_http_provider(
            "openai", name="llamacpp", base_url=server.base_url, model="m", key=None,
            retry=_no_retry(),
        )  # fmt: skip
        agent = Agent(
            provider,
            resolver=_FileReader(),
            system=system_prompt("ask", Path("/work/app")),
            context=ContextBudget(window=WINDOW if known else None),
        )
        session = Session()
        failed = 0
        for number in range(TURNS):
            prompt = Message.user(f"request {number}: " + "p" * 300)
            try:
                await run_turn(agent, session, prompt, _Steps(), ToolContext(), 5)
            except AgentError:  # counted: the figure is how many turns fail
                failed += 1
        summaries = sum(
            1
            for body in server.requests
            if str(body["messages"][0]["content"]).startswith("You summarise")
        )
        return len(server.requests), summaries, server.too_long, failed


async def _measure() -> list[Row]:
    rows = await _caching()
    for known in (True, False):
        calls, summaries, refused, failed = await _compaction(known)
        how = "window known" if known else "window learnt from refusals"
        extra = summaries + refused
        rows.append(
            (
                f"compaction, {TURNS} turns, 8k window ({how}): extra model calls",
                float(extra),
                float(calls - extra),
                extra / (calls - extra),
                "",
            )
        )
        done = TURNS - failed
        rows.append((f"  turns answered ({how})", float(done), float(TURNS), done / TURNS, "all"))
    return rows


def main() -> list[Row]:
    """Measure, print a table, and return its rows
    ``(figure, value, baseline, ratio, target)``."""
    rows = anyio.run(_measure)
    print(f"{'figure':<64} {'value':>10} {'baseline':>10} {'ratio':>7}  target")
    for figure, value, baseline, ratio, target in rows:
        base = f"{baseline:10.0f}" if baseline is not None else f"{'':>10}"
        rat = f"{ratio:7.3f}" if ratio is not None else f"{'':>7}"
        print(f"{figure:<64} {value:10.0f} {base} {rat}  {target}")
    return rows


if __name__ == "__main__":
    main()
