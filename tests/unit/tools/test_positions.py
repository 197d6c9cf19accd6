"""Positions in UTF-8/16/32, minimal edits, and applying them back."""

from __future__ import annotations

import random

import pytest
from lsprotocol.types import Position, Range, TextEdit

from rhema_lsp.tools import LineIndex, apply_workspace_edit_to_text, minimal_edits
from rhema_lsp.tools.positions import replacement_edits, unit_length

ENCODINGS = ["utf-8", "utf-16", "utf-32"]


def test_unit_lengths_of_astral_cjk_and_tab() -> None:
    assert unit_length("a😀b", "utf-16") == 4
    assert unit_length("a😀b", "utf-8") == 6
    assert unit_length("a😀b", "utf-32") == 3
    assert unit_length("漢字", "utf-8") == 6
    assert unit_length("漢字", "utf-16") == 2
    assert unit_length("\t", "utf-16") == 1


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_position_and_offset_round_trip(encoding: str) -> None:
    text = "a\tb😀c\r\n漢字😀x\rlast\nend"
    index = LineIndex(text, encoding)
    for offset in range(len(text) + 1):
        if text[offset - 1 : offset + 1] == "\r\n":
            continue  # never a boundary inside CRLF
        assert index.offset(index.position(offset)) == offset


def test_positions_after_emoji_differ_by_encoding() -> None:
    text = "x😀y"
    assert LineIndex(text, "utf-16").position(2) == Position(line=0, character=3)
    assert LineIndex(text, "utf-8").position(2) == Position(line=0, character=5)
    assert LineIndex(text, "utf-32").position(2) == Position(line=0, character=2)


def test_crlf_lines_count_once() -> None:
    index = LineIndex("a\r\nb\r\nc", "utf-16")
    assert index.position(3) == Position(line=1, character=0)
    assert index.position(6) == Position(line=2, character=0)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("hello world\n", "hello there\n"),
        ("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"),
        ("a\r\nb\r\n", "a\r\nb\r\nc\r\n"),
        ("x😀y\n漢字\n", "x😀z\n漢字!\n"),
        ("\tindent\n\tline\n", "\t\tindent\n\tline\n"),
        ("", "new file\n"),
        ("gone\n", ""),
        ("same\n", "same\n"),
        ("one\ntwo\nthree\nfour\n", "zero\none\nthree\nfour\nfive\n"),
        ("a\r\n", "a\n"),
    ],
)
def test_minimal_edits_apply_back(encoding: str, old: str, new: str) -> None:
    edits = minimal_edits(old, new, encoding)
    assert apply_workspace_edit_to_text(old, edits, encoding) == new
    if old == new:
        assert edits == []


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_minimal_edits_random_documents(encoding: str) -> None:
    rng = random.Random(7)
    alphabet = ["a", "b", "\n", "\r\n", "\t", "😀", "漢", " "]
    for _ in range(300):
        old = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        pieces = list(old)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(pieces))
            if pieces and rng.random() < 0.5:
                del pieces[min(at, len(pieces) - 1)]
            else:
                pieces.insert(at, rng.choice(alphabet))
        new = "".join(pieces)
        edits = minimal_edits(old, new, encoding)
        assert apply_workspace_edit_to_text(old, edits, encoding) == new


def test_edit_size_is_proportional_to_the_change() -> None:
    old = "".join(f"line {n}\n" for n in range(100_000))
    new = old.replace("line 50000\n", "line fifty thousand\n")
    edits = minimal_edits(old, new, "utf-16")
    assert len(edits) == 1
    assert edits[0].new_text == "fifty thousand"
    assert edits[0].range.start == Position(line=50_000, character=5)


def test_replacement_edits_trim_to_the_change() -> None:
    text = "value = compute(a, b)\n"
    start = text.index("compute(a, b)")
    edits = replacement_edits(text, [(start, start + 13, "compute(a, c)")], "utf-8")
    assert edits == [
        TextEdit(
            range=Range(start=Position(line=0, character=19), end=Position(line=0, character=20)),
            new_text="c",
        )
    ]


def test_overlapping_edits_are_rejected() -> None:
    edit = TextEdit(
        range=Range(start=Position(line=0, character=0), end=Position(line=0, character=3)),
        new_text="x",
    )
    inner = TextEdit(
        range=Range(start=Position(line=0, character=1), end=Position(line=0, character=2)),
        new_text="y",
    )
    with pytest.raises(ValueError, match="overlapping"):
        apply_workspace_edit_to_text("abcdef", [edit, inner], "utf-16")


def test_a_position_inside_a_character_falls_back_to_its_start() -> None:
    assert LineIndex("a😀b", "utf-16").offset(Position(line=0, character=2)) == 1
    assert LineIndex("a漢b", "utf-8").offset(Position(line=0, character=3)) == 1
    assert LineIndex("ab\ncd", "utf-8").offset(Position(line=0, character=99)) == 2
    assert LineIndex("ab", "utf-16").offset(Position(line=5, character=0)) == 2


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_replacements_starting_or_ending_inside_crlf_are_widened(encoding: str) -> None:
    text = "a\r\nb\r\nc"
    start = text.index("\nb")  # between \r and \n
    edits = replacement_edits(text, [(start, start + 2, "\nB")], encoding)
    assert apply_workspace_edit_to_text(text, edits, encoding) == "a\r\nB\r\nc"
    end = text.index("\r\nc") + 1  # ends between \r and \n
    edits = replacement_edits(text, [(2, end, "\nX\r")], encoding)
    assert apply_workspace_edit_to_text(text, edits, encoding) == "a\r\nX\r\nc"
