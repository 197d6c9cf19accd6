"""First token over ACP: the provider's first delta to the first
``agent_message_chunk`` at an ACP client, next to the adapter alone.

A paced OpenAI-wire SSE server (:class:`bench.paced_model.PacedModelServer`,
its own thread and event loop in this process) streams short answers of
:data:`DELTAS` marked deltas, :data:`INTERVAL` seconds apart, stamping each
send with ``time.perf_counter()``. Each turn's figure is the arrival of the
first delta minus its send:

- through ``python -m rhema_lsp acp``: a ``session/prompt`` of one session
  (mode ``ask``), the arrival being the moment the ACP SDK's client side
  hands this process the first ``agent_message_chunk`` (a real subprocess,
  real JSON-RPC on its stdio);
- the bare baseline: the same stream read by the OpenAI adapter in this
  process, the arrival being the first ``text_delta`` its sink receives.

The two alternate, :data:`TURNS` times each after a warm-up of each, so both
see the same machine at the same minutes. Target: the agent adds <= 5 ms at
p50 (the p50 through ACP minus the adapter's p50).

Run: ``python -m bench.acp_stream``.
"""

from __future__ import annotations

import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import AgentMessageChunk, ClientCapabilities, Implementation, TextContentBlock

from bench.paced_model import Pace, PacedModelServer, adapter_read, print_table

DELTAS = 4
INTERVAL = 0.02
TURNS = 40
ADDED_TARGET_MS = 5.0

Row = tuple[str, float, float, float, float]

REPO = Path(__file__).resolve().parents[1]

_FIRST = "<000000>"


class FirstChunkClient:
    """An ACP client that stamps the first message chunk of each prompt."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.chars = 0

    def reset(self) -> None:
        self.first = None
        self.chars = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            if self.first is None and _FIRST in update.content.text:
                self.first = time.perf_counter()
            self.chars += len(update.content.text)

    def on_connect(self, conn: Any) -> None:
        return None


async def acp_turn(
    conn: ClientSideConnection, client: FirstChunkClient, session: str, pace: Pace
) -> float:
    """One prompt; ms from the first delta's send to its chunk's arrival."""
    client.reset()
    response = await conn.prompt(session_id=session, prompt=[text_block("go")])
    if response.stop_reason != "end_turn":
        raise AssertionError(f"the prompt ended {response.stop_reason}")
    if client.first is None or client.chars != DELTAS * len(_FIRST):
        raise AssertionError(f"the client got {client.chars} characters, first {client.first}")
    return (client.first - pace.sent[0]) * 1000


async def adapter_turn(base_url: str, pace: Pace) -> float:
    """The same answer through the adapter alone; ms to its first delta."""
    _elapsed, sink = await adapter_read(base_url)
    if 0 not in sink.arrived or sink.chars != DELTAS * len(_FIRST):
        raise AssertionError(f"the adapter got {sink.chars} characters")
    return (sink.arrived[0] - pace.sent[0]) * 1000


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]


async def measure(root: Path, folder: Path) -> list[Row]:
    env = {
        "PYTHONPATH": str(REPO),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CONFIG_HOME": str(root / "config"),
    }
    client = FirstChunkClient()
    via_acp: list[float] = []
    bare: list[float] = []
    with PacedModelServer() as model:
        args = ("--provider", "custom", "--protocol", "openai", "--base-url", model.base_url)
        async with spawn_agent_process(
            cast(Client, client),
            sys.executable,
            *("-m", "rhema_lsp", "acp", *args, "--model", "fake-model", "--mode", "ask"),
            env=env,
        ) as (conn, _process):
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="rhema-bench", version="1"),
            )
            session = (await conn.new_session(cwd=str(folder))).session_id
            await acp_turn(conn, client, session, model.expect(Pace(DELTAS, INTERVAL)))
            await adapter_turn(model.base_url, model.expect(Pace(DELTAS, INTERVAL)))
            for _ in range(TURNS):
                pace = model.expect(Pace(DELTAS, INTERVAL))
                via_acp.append(await acp_turn(conn, client, session, pace))
                pace = model.expect(Pace(DELTAS, INTERVAL))
                bare.append(await adapter_turn(model.base_url, pace))
    rows: list[Row] = []
    for name, fraction in (("p50", 0.5), ("p90", 0.9)):
        value, baseline = _percentile(via_acp, fraction), _percentile(bare, fraction)
        rows.append(
            (
                f"first delta -> first agent_message_chunk {name}, ms (vs adapter)",
                value,
                baseline,
                value / baseline,
                math.nan,
            )
        )
        rows.append(
            (
                f"  added by the ACP agent {name}, ms [value]",
                value - baseline,
                math.nan,
                math.nan,
                ADDED_TARGET_MS if name == "p50" else math.nan,
            )
        )
    return rows


def main() -> list[Row]:
    """Measure first-chunk latency over ACP and through the adapter; print a table."""
    with tempfile.TemporaryDirectory(prefix="rhema-bench-acp-") as temp:
        root = Path(temp)
        (root / "workspace").mkdir()
        rows = asyncio.run(measure(root, root / "workspace"))
    print(
        f"{TURNS} turns each, alternating, of {DELTAS} deltas {INTERVAL * 1000:.0f} ms apart; "
        "[value]: target applies to the value, else to the ratio"
    )
    print_table(rows)
    return rows


if __name__ == "__main__":
    main()
