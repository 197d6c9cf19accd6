"""The per-result cap keeps head and tail on UTF-8 boundaries."""

from __future__ import annotations

from rhema_lsp.engine import TOOL_RESULT_CAP, truncate_tool_result


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
