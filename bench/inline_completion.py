"""Inline completion through the real server process, next to calling the
FIM endpoint directly, in the same run.

The model is the fake model server (real HTTP on 127.0.0.1, in a thread of
this process) answering ``POST /v1/completions`` at once. Three figures:

- **Latency the server adds.** ``LATENCY_RUNS`` completions, each at a new
  position that neither the cache nor the shown suggestion answers, through
  ``python -m rhema_lsp`` (``textDocument/inlineCompletion`` sent to its
  answer arriving, minus the debounce) and, as the baseline, the same FIM
  request with httpx directly (a kept-alive connection, as the server's).
  Targets: added p50 <= 10 ms, p90 <= 25 ms (on the value: server minus direct).
- **Model requests per 100 keystrokes** of scripted steady typing (a key
  every ``KEY_INTERVAL`` s, the editor asking after each key and cancelling
  its previous request, as VS Code does), the model a perfect one (it
  answers the rest of the line being typed). Target <= 15.
- **The typed-through hit rate**: the share of those requests the server
  answered from the suggestion shown, with no model request.

Run: ``python -m bench.inline_completion``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench._lsp_wire import LspError, LspProcess, initialize_params
from tests.fakes.model_server import FakeModelServer, Reply, text_reply

LATENCY_RUNS = 60
DEBOUNCE_MS = 50
KEY_INTERVAL = 0.12
ADDED_P50_TARGET = 10.0
ADDED_P90_TARGET = 25.0
REQUESTS_TARGET = 15.0

TYPED = (
    "def area(width, height):\n"
    "    return width * height\n"
    "\n"
    "def perimeter(width, height):\n"
    "    return 2 * (width + height)\n"
)
"""What the scripted typist types (and what the perfect model predicts)."""

Row = tuple[str, float, float, float, float]


def _perfect(body: Any) -> Reply:
    """The rest of the line the typist is typing; ``pass`` for anything else."""
    prompt = body.get("prompt", "") if isinstance(body, dict) else ""
    if TYPED.startswith(prompt):
        return text_reply(TYPED[len(prompt) :].split("\n", 1)[0] or "pass")
    return text_reply("pass")


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Editor:
    """The server process and one open document, as an editor drives them."""

    def __init__(self, server: LspProcess, uri: str) -> None:
        self.server = server
        self.uri = uri
        self.version = 1
        self.text = ""
        self.pending: tuple[int, asyncio.Future[Any]] | None = None

    @classmethod
    async def start(cls, base_url: str, root: Path, name: str) -> Editor:
        folder = root / "workspace"
        folder.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "XDG_STATE_HOME": str(root / "state")}
        server = await LspProcess.spawn([sys.executable, "-m", "rhema_lsp"], env=env, cwd=folder)
        options = {
            "provider": "custom",
            "protocol": "openai",
            "baseUrl": base_url,
            "model": "fake-model",
            "completionDebounce": DEBOUNCE_MS,
        }
        await server.request("initialize", initialize_params(folder, options))
        server.notify("initialized", {})
        uri = (folder / name).as_uri()
        document = {"uri": uri, "languageId": "python", "version": 1, "text": ""}
        server.notify("textDocument/didOpen", {"textDocument": document})
        return cls(server, uri)

    def _position(self) -> dict[str, int]:
        line = self.text.count("\n")
        return {"line": line, "character": len(self.text) - (self.text.rfind("\n") + 1)}

    def type(self, char: str) -> None:
        where = self._position()
        self.version += 1
        self.text += char
        self.server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": self.uri, "version": self.version},
                "contentChanges": [{"range": {"start": where, "end": where}, "text": char}],
            },
        )

    def ask(self) -> asyncio.Future[Any]:
        """Ask at the end of the text, cancelling the request before (as VS Code does)."""
        if self.pending is not None and not self.pending[1].done():
            self.server.notify("$/cancelRequest", {"id": self.pending[0]})
        future = self.server.send_request(
            "textDocument/inlineCompletion",
            {
                "textDocument": {"uri": self.uri},
                "position": self._position(),
                "context": {"triggerKind": 2},
            },
        )
        self.pending = (self.server._next_id, future)
        return future


async def _direct(base_url: str) -> list[float]:
    times = []
    async with httpx.AsyncClient(trust_env=False) as client:
        for number in range(LATENCY_RUNS + 1):
            prefix = "x = " + "z" * number
            start = time.perf_counter()
            response = await client.post(
                f"{base_url}/completions",
                json={"model": "fake-model", "prompt": prefix, "suffix": "", "max_tokens": 128},
            )
            response.json()
            if number:  # the first opens the connection
                times.append((time.perf_counter() - start) * 1000)
    return times


async def _through_server(base_url: str, root: Path) -> list[float]:
    editor = await Editor.start(base_url, root, "latency.py")
    times = []
    try:
        for char in "x = ":
            editor.type(char)
        for number in range(LATENCY_RUNS + 1):
            editor.type("z")
            start = time.perf_counter()
            await editor.ask()
            if number:
                times.append((time.perf_counter() - start) * 1000 - DEBOUNCE_MS)
    finally:
        await editor.server.close()
    return times


async def _typing(fake: FakeModelServer, root: Path) -> tuple[int, int, int]:
    """Keystrokes, model requests, requests answered by the shown suggestion."""
    editor = await Editor.start(fake.base_url, root, "typing.py")
    before = len(fake.posts)
    answered: list[asyncio.Future[Any]] = []
    try:
        for char in TYPED:
            editor.type(char)
            answered.append(editor.ask())
            await asyncio.sleep(KEY_INTERVAL)
        await asyncio.gather(*answered, return_exceptions=True)
    finally:
        await editor.server.close()
    requests = len(fake.posts) - before
    results = [f.result() for f in answered if not f.cancelled() and f.exception() is None]
    shown = sum(1 for result in results if result and result.get("items"))
    return len(TYPED), requests, max(0, shown - requests)


async def measure() -> list[Row]:
    with FakeModelServer(responder=_perfect) as fake, tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        direct = await _direct(fake.base_url)
        try:
            served = await _through_server(fake.base_url, root)
        except LspError as exc:
            raise SystemExit(f"the server failed: {exc}") from None
        keys, requests, typed_through = await _typing(fake, root)
    rows: list[Row] = []
    for name, share, target in (("p50", 0.5, ADDED_P50_TARGET), ("p90", 0.9, ADDED_P90_TARGET)):
        server_ms, direct_ms = _percentile(served, share), _percentile(direct, share)
        rows.append(
            (
                f"completion {name} beyond the debounce, ms (vs direct FIM call)",
                server_ms,
                direct_ms,
                server_ms / direct_ms,
                float("nan"),
            )
        )
        added = server_ms - direct_ms
        rows.append(
            (f"  added by the server {name}, ms [value]", added, direct_ms, float("nan"), target)
        )
    per_100 = requests * 100 / keys
    rows.append(
        (
            "model requests per 100 keystrokes (vs keystrokes) [value]",
            per_100,
            100.0,
            per_100 / 100,
            REQUESTS_TARGET,
        )
    )
    asked = typed_through + requests
    rows.append(
        (
            "typed-through hit rate (of the answers: baseline)",
            typed_through / max(1, asked),
            float(asked),
            float("nan"),
            float("nan"),
        )
    )
    rows.append(
        (
            "direct FIM call mean, ms",
            statistics.fmean(direct),
            float("nan"),
            float("nan"),
            float("nan"),
        )
    )
    return rows


def print_table(rows: list[Row]) -> None:
    """Print ``rows``; ``[value]`` marks a target on the value, else on the ratio."""
    print(f"{'figure':<60} {'value':>9} {'baseline':>9} {'ratio':>7} {'target':>7}")
    for figure, value, baseline, ratio, target in rows:
        cells = [
            f"{number:>9.3g}" if number == number else f"{'-':>9}"
            for number in (value, baseline, ratio, target)
        ]
        print(f"{figure:<60} {' '.join(cells)}")


def main() -> list[Row]:
    """Measure; print a table; return its rows."""
    rows = asyncio.run(measure())
    print(
        f"{LATENCY_RUNS} completions each way, debounce {DEBOUNCE_MS} ms; "
        f"a key every {KEY_INTERVAL * 1000:.0f} ms"
    )
    print_table(rows)
    return rows


if __name__ == "__main__":
    main()
