"""Positions between the editor's encoding and a language server's: each
position recoded on the text of its own document's line, whichever key
names the document, and passed on as it is where the text is unknown."""

from __future__ import annotations

from typing import Any

import pytest

from rhema_lsp.language.recode import recode_params, recode_result

A = "file:///w/a.py"
B = "file:///w/b.py"
TEXTS = {A: "é😀x = 1\nplain\n", B: "漢字 = greet()\n"}
# "x" on A's first line: after é (2 UTF-8 bytes, 1 UTF-16 unit) and 😀 (4 bytes, 2 units).
X_UTF8, X_UTF16, X_UTF32 = 6, 3, 2


async def text_of(uri: str) -> str | None:
    return TEXTS.get(uri)


def at(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


async def test_one_encoding_on_both_sides_is_passed_through_untouched() -> None:
    params = {"textDocument": {"uri": A}, "position": at(0, 99)}
    assert await recode_params(params, "utf-16", "utf-16", text_of) is params
    assert await recode_result([params], "utf-8", "utf-8", text_of) == [params]


@pytest.mark.parametrize(
    ("ours", "theirs", "given", "sent"),
    [
        ("utf-8", "utf-16", X_UTF8, X_UTF16),
        ("utf-16", "utf-8", X_UTF16, X_UTF8),
        ("utf-32", "utf-16", X_UTF32, X_UTF16),
        ("utf-16", "utf-32", X_UTF16, X_UTF32),
    ],
)
async def test_a_question_s_position_is_recoded_on_its_line(
    ours: str, theirs: str, given: int, sent: int
) -> None:
    params = {"textDocument": {"uri": A}, "position": at(0, given), "context": {"x": 1}}
    recoded = await recode_params(params, ours, theirs, text_of)
    assert recoded == {"textDocument": {"uri": A}, "position": at(0, sent), "context": {"x": 1}}
    assert params["position"] == at(0, given)  # the question itself is not changed


async def test_locations_and_links_take_each_their_own_document() -> None:
    answer: list[dict[str, Any]] = [
        {"uri": A, "range": {"start": at(0, X_UTF16), "end": at(0, X_UTF16 + 1)}},
        {"uri": B, "range": {"start": at(0, 2), "end": at(0, 3)}},
        {
            "targetUri": B,
            "targetRange": {"start": at(0, 0), "end": at(0, 2)},
            "targetSelectionRange": {"start": at(0, 5), "end": at(0, 10)},
        },
    ]
    recoded = await recode_result(answer, "utf-16", "utf-8", text_of)
    assert recoded == [
        {"uri": A, "range": {"start": at(0, X_UTF8), "end": at(0, X_UTF8 + 1)}},
        # 漢字 are one UTF-16 unit and three UTF-8 bytes each
        {"uri": B, "range": {"start": at(0, 6), "end": at(0, 7)}},
        {
            "targetUri": B,
            "targetRange": {"start": at(0, 0), "end": at(0, 6)},
            "targetSelectionRange": {"start": at(0, 9), "end": at(0, 14)},
        },
    ]


async def test_a_workspace_edit_s_changes_are_recoded_by_their_key() -> None:
    edit = {
        "changes": {
            A: [{"range": {"start": at(0, X_UTF16), "end": at(0, X_UTF16 + 1)}, "newText": "y"}],
            B: [{"range": {"start": at(0, 0), "end": at(0, 2)}, "newText": "名前"}],
        }
    }
    recoded = await recode_result(edit, "utf-16", "utf-8", text_of)
    assert recoded["changes"][A][0]["range"] == {"start": at(0, X_UTF8), "end": at(0, X_UTF8 + 1)}
    assert recoded["changes"][B][0]["range"] == {"start": at(0, 0), "end": at(0, 6)}
    assert recoded["changes"][B][0]["newText"] == "名前"


async def test_an_answer_without_a_uri_belongs_to_the_given_document() -> None:
    # a document's symbols, diagnostics or hover: positions of the asked file
    symbols = [{"name": "x", "range": {"start": at(0, X_UTF16), "end": at(1, 5)}}]
    recoded = await recode_result(
        symbols, "utf-16", "utf-8", text_of, uri="file:///w/new.py", text="é😀x\nplain\n"
    )
    assert recoded == [{"name": "x", "range": {"start": at(0, X_UTF8), "end": at(1, 5)}}]


async def test_an_unknown_document_or_line_passes_positions_on_unchanged() -> None:
    answer = [
        {"uri": "file:///w/gone.py", "range": {"start": at(0, 3), "end": at(0, 4)}},
        {"uri": A, "range": {"start": at(7, 3), "end": at(7, 4)}},  # past the last line
    ]
    assert await recode_result(answer, "utf-16", "utf-8", text_of) == answer


async def test_a_position_inside_a_character_or_past_the_line_end_is_clamped() -> None:
    # UTF-16 unit 2 falls between 😀's surrogates: the whole character is taken;
    # a character past the end of "plain" is the line's end.
    params = {
        "textDocument": {"uri": A},
        "range": {"start": at(0, 2), "end": at(1, 40)},
    }
    recoded = await recode_params(params, "utf-16", "utf-8", text_of)
    assert recoded["range"] == {"start": at(0, X_UTF8), "end": at(1, 5)}


async def test_each_document_is_read_once_per_answer() -> None:
    asked: list[str] = []

    async def counting(uri: str) -> str | None:
        asked.append(uri)
        return TEXTS.get(uri)

    many = [{"uri": A, "range": {"start": at(0, 1), "end": at(0, 3)}} for _ in range(5)]
    await recode_result(many, "utf-16", "utf-8", counting)
    assert asked == [A]
