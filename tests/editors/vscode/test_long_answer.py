"""A 2,000-line answer in real VS Code (code-server): the chat renders it as it streams while
the user types a follow-up into the input, and every keystroke lands. The answer mixes short
sections with a 500-line code block and a 500-line list (blocks that only close at their end).

The figures are recorded, never asserted (a shared machine is no stopwatch): when the model
sent the first and the last piece, when the answer's text last changed in the view's DOM
(``data-rendered-at``: the rendering time, and how far it lagged the model), the latency of
each keypress during the stream (``data-key-latency`` and ``data-key-log``: from the key event
to the frame after it) as p50/p95/max, and the view's long tasks (over 50 ms) meanwhile.
They go to ``chat-long-answer.json`` among the artifacts, beside a screenshot, and are printed
for docs/benchmarks.md.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from tests.editors.vscode.conftest import VSCode
from tests.fakes.model_server import FakeModelServer, text_reply

pytestmark = pytest.mark.timeout(900)

CHAT = {"in": "chat"}
LINES = 2000
FOLLOW_UP = "Thanks, and now summarise that in three bullet points please"


def long_answer(lines: int) -> str:
    """A Markdown answer of ``lines`` lines: half of it sections of headings, paragraphs, short
    lists, code and tables; then one long code block and one long tight list (a quarter each:
    the shapes a whole-block re-render per update made quadratic), and a closing line."""
    out: list[str] = []
    section = 0
    while True:
        section += 1
        part = [f"## Part {section}", ""]
        part += [f"Paragraph {section} explains `step_{section}` with **emphasis**."] * 3
        part += ["", *(f"- item {section}.{i} of the list" for i in range(1, 6))]
        part += [
            "",
            "```python",
            *(f"def f_{section}_{i}(x):  # line {i}" for i in range(8)),
            "```",
        ]
        if section % 10 == 0:
            rows = [f"| k{i} | {i * section} |" for i in range(6)]
            part += ["", "| name | value |", "|---|---|", *rows]
        part.append("")
        if len(out) + len(part) > lines // 2:
            break
        out += part
    quarter = lines // 4
    out += ["", "The whole module:", "", "```python"]
    out += [f"def g_{i}(x):  return x * {i}  # generated line {i}" for i in range(quarter - 5)]
    out += ["```", ""]
    out += [f"- check {i}: `g_{i}` returns **{i}** times x" for i in range(lines - len(out) - 2)]
    out += ["", "That is the whole guide."]
    return "\n".join(out) + "\n"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


# No file is edited or saved: code-server's default auto save only (docs/benchmarks.md
# measured both settings once; they rendered alike).
def test_a_2000_line_answer_streams_while_the_user_types(
    vscode: VSCode, model: FakeModelServer, artifacts: Path, extra_settings: dict[str, Any]
) -> None:
    answer = long_answer(LINES)
    model.script(text_reply(answer, chunk=200, delay=0.04))
    name = "autosave-off" if extra_settings else "default"
    shot = artifacts / f"chat-long-answer-{name}.png"
    steps = vscode.drive(
        [
            {"command": "Rhema: Open Chat"},
            {**CHAT, "click": "#input"},
            {"typeText": "Write a long guide"},
            {"press": "Enter"},
            # The user types the follow-up while the answer streams its long code block
            # and list (attached, not visible: a block scrolled by stays in the DOM).
            {**CHAT, "waitFor": ".answer .code", "hasText": "line 20", "state": "attached"},
            {**CHAT, "click": "#input"},
            {"typeText": FOLLOW_UP, "delayMs": 45},
            {**CHAT, "waitFor": ".end"},
            {**CHAT, "query": ".answer"},
            {**CHAT, "query": "#input"},
            {**CHAT, "query": "body"},
            {**CHAT, "query": ".answer h2"},
            {**CHAT, "query": ".answer pre code"},
            {**CHAT, "query": ".answer li"},
            {"screenshot": str(shot)},
        ],
        timeout_s=240,
    )
    queries = [s["elements"] for s in steps if "query" in s]
    (shown,), (typed,), (body,), headings, blocks, items = queries
    # The long code block (streamed line by line) and the long list (streamed in parts)
    # end rendered as the whole text renders them.
    fence = answer.split("```python\n")[-1].split("```")[0]
    assert blocks[-1]["text"] == fence
    assert blocks[-1]["classes"] == "hljs language-python"
    assert len(items) == answer.count("\n- ")
    # Everything arrived, rendered, and every keystroke landed in the input.
    assert typed["value"] == FOLLOW_UP
    assert shown["text"].rstrip().endswith(answer.rstrip().splitlines()[-1].strip("`").strip())
    assert len(headings) == answer.count("## Part ")
    first_sent, last_sent = model.sent[0][0] * 1000, model.sent[-1][0] * 1000
    stamps = [int(at) for at in typed["data"]["keyLog"].split(",")]
    latencies = json.loads(typed["data"]["keyLatency"])
    assert len(stamps) == len(latencies) >= len(FOLLOW_UP)
    # The keys typed while the answer streamed (not the first prompt's).
    during = [ms for at, ms in zip(stamps, latencies, strict=True) if first_sent <= at <= last_sent]
    assert during, (stamps, first_sent, last_sent)
    rendered = int(shown["data"]["renderedAt"])
    visible = int(shown["data"]["visibleAt"])
    assert first_sent <= visible <= rendered  # one machine, one clock
    tasks = [
        (int(at), int(ms))
        for at, ms in (t.split(":") for t in body["data"].get("taskLog", "").split(",") if t)
    ]
    streaming = [ms for at, ms in tasks if first_sent <= at <= last_sent]
    figures = {
        "lines": LINES,
        "characters": len(answer),
        "model_streamed_s": round((last_sent - first_sent) / 1000, 2),
        "rendered_after_first_piece_s": round((rendered - first_sent) / 1000, 2),
        "rendering_lag_after_model_s": round((rendered - last_sent) / 1000, 2),
        "key_latency_ms_during_stream": {
            "keys": len(during),
            "p50": percentile(during, 0.5),
            "p95": percentile(during, 0.95),
            "max": max(during),
            "mean": round(statistics.fmean(during), 1),
        },
        "long_tasks_during_stream": {
            "count": len(streaming),
            "total_ms": sum(streaming),
            "max_ms": max(streaming, default=0),
        },
    }
    print(f"\n2,000-line answer ({name}): {json.dumps(figures)}")
    path = artifacts / "chat-long-answer.json"
    kept = json.loads(path.read_text()) if path.exists() else {}
    kept[name] = figures
    path.write_text(json.dumps(kept, indent=1))
    assert shot.stat().st_size > 0
