"""The prompt and the context ``rhema-lsp ask`` reads before starting anything."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from rhema_lsp.cli.embedded import CONTEXT_BUDGET, LISTING_LIMIT, folder_context
from rhema_lsp.cli.inputs import attached_files, read_prompt
from rhema_lsp.headless.errors import Exit, UsageError


def test_the_prompt_comes_from_one_place(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text("from a file ✓", encoding="utf-8")
    piped = io.BytesIO("from stdin ✓".encode())
    assert read_prompt("the argument", None, io.BytesIO(b"unused"), False) == "the argument"
    assert read_prompt(None, str(tmp_path / "p.txt"), io.BytesIO(), True) == "from a file ✓"
    assert read_prompt("-", None, piped, True) == "from stdin ✓"
    assert read_prompt(None, None, io.BytesIO(b"a pipe"), False) == "a pipe"
    assert read_prompt(None, "-", io.BytesIO(b"dash file"), True) == "dash file"


@pytest.mark.parametrize(
    ("argument", "prompt_file", "stdin", "tty", "message"),
    [
        ("a", "b.txt", b"", True, "give the prompt once"),
        (None, None, b"", True, "no prompt: give it as an argument"),
        (" \n\t", None, b"", True, "the prompt argument is blank"),
        (None, None, b"  \n", False, "the prompt on stdin is blank"),
        ("-", None, b"\xff\xfe", True, "the prompt on stdin is not UTF-8 text (byte 0)"),
        (None, "/nonexistent/p.txt", b"", True, "--prompt-file /nonexistent/p.txt: No such"),
    ],
)
def test_prompt_mistakes_are_usage_errors(
    argument: str | None, prompt_file: str | None, stdin: bytes, tty: bool, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        read_prompt(argument, prompt_file, io.BytesIO(stdin), tty)
    assert str(caught.value).startswith(message)
    assert caught.value.exit_code is Exit.USAGE


def test_files_must_be_inside_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.py").write_text("a = 1\n")
    (tmp_path / "secret.txt").write_text("no\n")
    (folder / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert (
        attached_files(folder, ["sub/a.py", str(folder / "sub" / "a.py")])
        == ((folder / "sub" / "a.py").resolve(),) * 2
    )
    for name, message in [
        ("../secret.txt", "is outside"),
        ("link.txt", "is outside"),
        (str(tmp_path / "secret.txt"), "is outside"),
        ("sub", "no such file"),
        ("missing.py", "no such file"),
    ]:
        with pytest.raises(UsageError, match=message):
            attached_files(folder, [name])


def test_the_embedded_model_is_shown_the_small_files_and_no_hidden_ones(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / ".env").write_text("KEY=secret\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "small.py").write_text("x = 1\n")
    (tmp_path / "big.txt").write_text("y" * (CONTEXT_BUDGET + 1))
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    context = folder_context(tmp_path)
    assert context.listing == "The workspace folder holds: big.txt, blob.bin, pkg/small.py."
    assert context.files == (tmp_path / "pkg" / "small.py",)


def test_a_big_folder_is_listed_only_in_part(tmp_path: Path) -> None:
    for number in range(LISTING_LIMIT + 5):
        (tmp_path / f"f{number:03}.txt").write_text("z" * 100)
    context = folder_context(tmp_path)
    assert context.listing.endswith("f049.txt and more.")
    assert sum(len(path.read_text()) for path in context.files) <= CONTEXT_BUDGET
