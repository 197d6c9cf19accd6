"""The per-result cap keeps head and tail on UTF-8 boundaries, and is the
run's ``toolOutputCap`` (default :data:`TOOL_RESULT_CAP`)."""

from __future__ import annotations

import pytest

from rhema_lsp.engine import (
    TOOL_RESULT_CAP,
    ToolCall,
    ToolContext,
    ToolResult,
    truncate_tool_result,
)
from rhema_lsp.engine.calls import resolve_call
from rhema_lsp.engine.request import ToolSpec
from rhema_lsp.runs.settings import parse_settings


def test_short_results_ride_verbatim() -> None:
    assert truncate_tool_result("ok") == "ok"
    exact = "a" * TOOL_RESULT_CAP
    assert truncate_tool_result(exact) is exact


def test_long_results_keep_head_and_tail_around_a_marker() -> None:
    long = "a" * 30_000 + "z" * 10_000
    cut = truncate_tool_result(long)
    head, marker, tail = cut.split("\n")
    assert head == "a" * (TOOL_RESULT_CAP * 2 // 3)
    assert tail == "z" * (TOOL_RESULT_CAP // 4)
    elided = 40_000 - len(head) - len(tail)
    assert marker == (
        f"[... truncated {elided} bytes — narrow the request (offset/limit, path or "
        "pattern filters) and retry ...]"
    )


def test_multibyte_text_is_cut_on_character_boundaries() -> None:
    # 3-byte CJK and 4-byte emoji so that both cut points fall mid-character
    long = "界" * 9_000 + "🙂" * 3_001
    cut = truncate_tool_result(long)
    cut.encode("utf-8")  # would raise on a split surrogate; str slicing by bytes must decode
    head, _, tail = cut.split("\n")
    assert set(head) == {"界"}
    assert set(tail) == {"🙂"}
    assert len(head.encode()) <= TOOL_RESULT_CAP * 2 // 3
    assert len(head.encode()) > TOOL_RESULT_CAP * 2 // 3 - 3
    assert len(tail.encode()) >= TOOL_RESULT_CAP // 4
    assert len(tail.encode()) < TOOL_RESULT_CAP // 4 + 4
    assert len(cut.encode()) < TOOL_RESULT_CAP + 200


class _Long:
    """A resolver whose one tool answers ``size`` bytes."""

    def __init__(self, size: int) -> None:
        self.size = size

    def specs(self) -> list[ToolSpec]:
        return []

    async def resolve_streaming(
        self, call: ToolCall, ctx: ToolContext, progress: object, status: object = None
    ) -> ToolResult:
        return ToolResult.success(call.id, "x" * self.size)


class _Sink:
    def emit(self, event: object) -> None:
        pass


@pytest.mark.parametrize(("cap", "kept"), [(TOOL_RESULT_CAP, False), (100_000, True)])
async def test_the_cap_is_the_runs_tool_output_cap(cap: int, kept: bool) -> None:
    call = ToolCall(id="c1", name="big", args={})
    result = await resolve_call(_Long(50_000), call, ToolContext(result_cap=cap), _Sink())  # type: ignore[arg-type]
    assert (result.content == "x" * 50_000) is kept
    assert len(result.content.encode()) <= cap


def test_the_setting_is_bounded() -> None:
    settings, problems = parse_settings({"toolOutputCap": 100_000})
    assert settings.tool_output_cap == 100_000 and problems == []
    settings, problems = parse_settings({"toolOutputCap": 10})
    assert settings.tool_output_cap == TOOL_RESULT_CAP
    assert [p.field for p in problems] == ["toolOutputCap"]
