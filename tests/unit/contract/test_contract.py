"""The typed contract is the one home of commands and events: the server
serves exactly its table, the engine's events send exactly its payloads, and
every file made from it (JSON Schema, the VS Code types, the docs' tables) and
the Neovim client agree with it."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from rhema_lsp import engine
from rhema_lsp.contract import (
    COMMANDS,
    EVENT_MODELS,
    TURN,
    DiagnosticsParams,
    DiagnosticsResult,
    InitializationOptions,
    LanguageParams,
    LanguageResult,
    RhemaEventParams,
    TurnArgs,
    Wire,
    json_field_names,
)
from rhema_lsp.contract.__main__ import every_artefact
from rhema_lsp.contract.generate import json_schema
from rhema_lsp.engine import Usage
from rhema_lsp.runs.settings import Settings

REPO = Path(__file__).resolve().parents[3]
NVIM = REPO / "editors" / "nvim" / "lua" / "rhema"

SAMPLES: list[Any] = [
    engine.StepStart(iteration=0),
    engine.ThinkingDelta(text="hm"),
    engine.TextDelta(text="hi"),
    engine.ToolCallStart(id="c1", name="read_file"),
    engine.ToolCallArgsDelta(id="c1", delta='{"pa'),
    engine.ProviderToolUse(id="srvtoolu_1", name="web_search", detail="rust borrow checker"),
    engine.ToolOutputDelta(id="c1", chunk="line\n"),
    engine.ToolStatusEvent(id="c1", status=engine.ToolStatus(activity="approved")),
    engine.ToolStatusEvent(
        id="c1", status=engine.ToolStatus(activity="sub-agent", spent=Usage(input=1, output=2))
    ),
    engine.ToolResultEvent(id="c1", name="read_file", content="x", is_error=False, code=3),
    engine.PlanUpdate(
        entries=(
            engine.PlanEntry("read the code", "completed"),
            engine.PlanEntry("fix it", "in_progress"),
        )
    ),
    engine.UsageUpdate(usage=Usage(input=5, output=6, cache_read=4)),
    engine.RetryWait(error="overloaded", delay_seconds=1.5, attempt=1, total=3),
    engine.StepEnd(usage=Usage(input=1, output=1), stop_reason=engine.StopReason.TOOL_USE),
    engine.CompactionEvent(before=9000, after=3000, summary_tokens=400),
    engine.ContextFill(tokens=3000, window=8192),
    engine.ContextFill(tokens=3000, window=None),
    engine.TurnEnd(stop_reason="cancelled", text="", steps=1, usage=Usage()),
    engine.RulesInUse(files=("AGENTS.md", "pkg/AGENTS.md")),
    engine.ErrorEvent(message="boom"),
    engine.ChildEvent(id="c2", session="s-task-1", event=engine.TextDelta(text="hi")),
    engine.ChildEvent(
        id="c2",
        session="s-task-1",
        event=engine.TurnEnd(stop_reason="cancelled", text="", steps=1, usage=Usage()),
    ),
]


def _event_classes() -> list[Any]:
    return list(typing.get_args(engine.Event))


def test_every_engine_event_has_exactly_one_contract_model() -> None:
    engine_types = sorted(cls.type for cls in _event_classes())
    contract_types = sorted(m.model_fields["type"].default for m in EVENT_MODELS)
    assert engine_types == contract_types
    assert {type(sample) for sample in SAMPLES} == set(_event_classes())


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).__name__)
def test_an_engine_events_payload_is_its_contract_model_exactly(event: Any) -> None:
    payload = event.payload()
    params = RhemaEventParams.model_validate(
        {"session": "s", "turn": 1, "seq": 1, "event": payload}
    )
    assert params.wire()["event"] == payload


def test_a_payload_with_a_field_the_contract_lacks_is_refused() -> None:
    with pytest.raises(ValidationError, match="extra"):
        RhemaEventParams.model_validate(
            {"session": "s", "turn": 1, "seq": 1, "event": {"type": "text_delta", "x": 1}}
        )


def test_the_server_serves_exactly_the_contracts_commands() -> None:
    from rhema_lsp.server import handlers
    from rhema_lsp.server.router import _HANDLERS, served

    handlers.load()  # every module (each loads with its first command)
    assert sorted(served()) == sorted(spec.name for spec in COMMANDS)
    assert sorted(handlers.MODULES) == sorted(served())
    for name, module in handlers.MODULES.items():
        assert _HANDLERS[name].__module__ == f"rhema_lsp.server.handlers.{module}", name


def test_arguments_are_camel_case_and_unknown_fields_are_named() -> None:
    args = TURN.parse({"prompt": "hi", "maxSteps": 3})
    assert isinstance(args, TurnArgs)
    assert args.max_steps == 3
    with pytest.raises(ValidationError, match="maxStep\n"):
        TURN.parse({"prompt": "hi", "maxStep": 3})


def test_results_go_out_camel_case() -> None:
    from rhema_lsp.contract import CallSummary, StepResult, UsageTally

    result = StepResult(
        session="s",
        turn=1,
        stop_reason="tool_use",
        text="",
        tool_calls=[CallSummary(id="c", name="grep", is_error=True)],
        usage=UsageTally(input=1, output=2, cache_read=0, cache_write=0),
    )
    assert result.wire()["toolCalls"] == [{"id": "c", "name": "grep", "isError": True}]
    assert result.wire()["stopReason"] == "tool_use"


@pytest.mark.parametrize("artefact", every_artefact(), ids=lambda a: str(a.path))
def test_files_made_from_the_contract_are_current(artefact: Any) -> None:
    assert artefact.is_current(REPO), (
        f"{artefact.path} disagrees with rhema_lsp/contract: run `python -m rhema_lsp.contract`"
    )


def test_every_model_is_in_the_schema_once() -> None:
    schema = json_schema()
    for model in EVENT_MODELS:
        assert model.__name__ in schema["$defs"]
    assert list(schema["commands"]) == [spec.name for spec in COMMANDS]


# -- the Neovim client -----------------------------------------------------------

# LSP's own camelCase names the plugin uses (not part of rhema's contract)
LSP_NAMES = {
    "textDocument",
    "documentChanges",
    "failureReason",
    "workDoneToken",
    "initializationOptions",
    "workspaceFolders",
    "editSelection",  # the client-side command rhema.editSelection
    # LSP 3.18's inline completion (rhema.inline)
    "insertText",
    "triggerKind",
    # Locations and symbols the language servers answer (rhema/language converts them)
    "targetUri",
    "targetRange",
    "targetSelectionRange",
    "selectionRange",
    # WorkspaceEdit and its change annotations (the Neovim review reads them)
    "workspaceEdit",
    "changeAnnotationSupport",
    "groupsOnLabel",
    "changeAnnotations",
    "annotationId",
    "needsConfirmation",
    "newText",
    "oldUri",
    "newUri",
    "ignoreIfExists",
}


IGNORED_BY_NEOVIM = {"step_end"}
"""Events the panel has nothing to show for (usage and turn_end cover them)."""


def _lua() -> dict[str, str]:
    """The plugin's Lua modules by path under `lua/rhema` (`panel/events.lua`)."""
    return {
        path.relative_to(NVIM).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(NVIM.rglob("*.lua"))
    }


def test_neovim_handles_exactly_the_contracts_events_with_their_fields() -> None:
    source = _lua()["panel/events.lua"]
    body = source[source.index("function Panel:on_event") :]
    body = body[: body.index("\nend\n")]
    branches = re.split(r"\n  (?:if|elseif) kind == '", body)[1:]
    models = {m.model_fields["type"].default: m for m in EVENT_MODELS}
    handled = {}
    for branch in branches:
        kind = branch.split("'", 1)[0]
        handled[kind] = set(re.findall(r"\bevent\.(\w+)(?:\.(\w+))?", branch))
    assert set(handled) <= set(models), "panel/events.lua handles events the contract lacks"
    assert set(models) - set(handled) == IGNORED_BY_NEOVIM, "a new event: render or ignore it"
    for kind, accesses in handled.items():
        model = models[kind]
        fields = json_field_names(model)
        for name, inner in accesses:
            assert name in fields, f"panel/events.lua reads {kind}.{name}, which the contract lacks"
            if inner:
                nested = model.model_fields[_python_name(model, name)].annotation
                nested_model = next(a for a in (*typing.get_args(nested), nested) if _is_model(a))
                assert inner in json_field_names(nested_model), f"{kind}.{name}.{inner}"


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _python_name(model: type[Wire], wire_name: str) -> str:
    return next(
        name for name, field in model.model_fields.items() if (field.alias or name) == wire_name
    )


def test_neovim_calls_only_the_contracts_commands() -> None:
    names = {spec.name for spec in COMMANDS}
    used = set()
    sources = {name: source for name, source in _lua().items() if name != "facts.lua"}
    for source in sources.values():
        used |= set(re.findall(r"'(rhema\.[a-z][A-Za-z]*)'", source))
        used |= {f"rhema.{name}" for name in re.findall(r"facts\.commands\.(\w+)", source)}
        used |= {f"rhema.{kind}" for kind in re.findall(r"run\('(\w+)'", source)}
    modules = {f"rhema.{name[:-4].replace('/', '.')}" for name in _lua()}
    used -= modules | {"rhema.attach", "rhema.highlights", "rhema.progress", "rhema.panel"}
    used -= {"rhema.editSelection"}  # the client's own command
    assert used, "the plugin's command names were not found"
    assert used <= names, f"unknown to the contract: {sorted(used - names)}"


def test_neovim_reads_only_field_names_the_contract_has() -> None:
    known: set[str] = set()
    for spec in COMMANDS:
        known |= json_field_names(spec.args) | json_field_names(spec.result)
        known.add(spec.name.split(".", 1)[1])
    for model in EVENT_MODELS:
        known |= json_field_names(model)
    known |= json_field_names(InitializationOptions) | json_field_names(Settings)
    for language in (LanguageParams, LanguageResult, DiagnosticsParams, DiagnosticsResult):
        known |= json_field_names(language)
    camel = set()
    for source in _lua().values():
        camel |= set(re.findall(r"\.([a-z]+[A-Z]\w*)\b", source))
        camel |= set(re.findall(r"\b([a-z]+[A-Z]\w*) =", source))
    camel -= {name for name in camel if name.startswith(("nvim_", "buf", "win"))}
    unknown = camel - known - LSP_NAMES
    assert not unknown, f"camelCase names the contract does not define: {sorted(unknown)}"


def test_the_language_request_serves_exactly_the_tools_lsp_methods() -> None:
    from rhema_lsp.contract import LANGUAGE_METHODS
    from rhema_lsp.tools import LANGUAGE_METHODS as TOOLS_METHODS

    assert set(LANGUAGE_METHODS) == TOOLS_METHODS
    schema = json_schema()["requests"]["rhema/language"]
    assert set(schema["forms"]) == {*TOOLS_METHODS, "diagnostics"}
    with pytest.raises(ValidationError):
        LanguageParams.model_validate({"method": "textDocument/hover", "params": {}})


def test_language_is_declared_in_client_capabilities() -> None:
    from rhema_lsp.contract import declared_capabilities

    assert declared_capabilities({"clientCapabilities": {"language": True}}).language
    assert not declared_capabilities({"clientCapabilities": {"events": True}}).language
