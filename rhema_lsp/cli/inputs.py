"""What ``rhema-lsp ask`` reads besides its flags: the prompt and the files
attached to it.

The prompt comes from exactly one place: the argument, ``-`` or a pipe on
stdin, or ``--prompt-file``. It is read as UTF-8, whole (no size limit the
OS would impose on an argument), and refused when blank. Attached files must
exist inside the workspace folder.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from rhema_lsp.headless.errors import UsageError

if TYPE_CHECKING:
    from rhema_lsp.contract import ImageArg

__all__ = ["attached_files", "read_prompt"]

_WHERE = "give it as an argument, with --prompt-file PATH, or on stdin (`-` or a pipe)"


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"the prompt {source} is not UTF-8 text (byte {exc.start})") from exc


def read_prompt(
    argument: str | None, prompt_file: str | None, stdin: BinaryIO, stdin_is_tty: bool
) -> str:
    """The prompt, from the one place it was given.

    Parameters
    ----------
    argument
        The positional prompt; ``-`` means stdin.
    prompt_file
        ``--prompt-file``; ``-`` means stdin.
    stdin
        Read when the prompt comes from stdin.
    stdin_is_tty
        Without argument or file, a pipe on stdin is the prompt; a terminal is not.

    Raises
    ------
    UsageError
        Given twice, not given, unreadable, not UTF-8, or blank.
    """
    if argument is not None and prompt_file is not None:
        raise UsageError("give the prompt once: as an argument or with --prompt-file, not both")
    if prompt_file is not None and prompt_file != "-":
        try:
            data = Path(prompt_file).expanduser().read_bytes()
        except OSError as exc:
            raise UsageError(f"--prompt-file {prompt_file}: {exc.strerror or exc}") from exc
        source = f"in {prompt_file}"
    elif argument == "-" or prompt_file == "-" or (argument is None and not stdin_is_tty):
        data = stdin.read()
        source = "on stdin"
    elif argument is None:
        raise UsageError(f"no prompt: {_WHERE}")
    else:
        data = argument.encode("utf-8", "surrogateescape")
        source = "argument"
    prompt = _decode(data, source)
    if not prompt.strip():
        raise UsageError(f"the prompt {source} is blank: {_WHERE}")
    return prompt


def attached_files(folder: Path, names: list[str]) -> tuple[Path, ...]:
    """The ``--file`` paths, resolved, each an existing file inside ``folder``.

    Raises
    ------
    UsageError
        A path that is missing, not a file, or outside ``folder``.
    """
    root = folder.resolve()
    paths = []
    for name in names:
        path = Path(name).expanduser()
        resolved = (path if path.is_absolute() else root / path).resolve()
        if root not in resolved.parents:
            raise UsageError(
                f"--file {name} is outside {root}: the agent works inside --folder only; "
                "attach files from it, or pick another --folder"
            )
        if not resolved.is_file():
            raise UsageError(f"--file {name}: no such file in {root}")
        paths.append(resolved)
    return tuple(paths)


def attached_images(names: list[str]) -> tuple[ImageArg, ...]:
    """The ``--image`` files, read: any file the user names (a screenshot
    outside the folder too, since the user chose it), each a PNG, JPEG, GIF
    or WebP image by its bytes, at most :data:`~rhema_lsp.engine.IMAGE_MAX_BYTES`.

    Raises
    ------
    UsageError
        A path that is missing, not a file, too large or not an image.
    """
    if not names:
        return ()
    # Here, not at the top: the CLI's start must not load pydantic (the ACP door).
    from rhema_lsp.contract import ImageArg
    from rhema_lsp.engine import IMAGE_MAX_BYTES, sniff_image

    images = []
    for name in names:
        path = Path(name).expanduser()
        if not path.is_file():
            raise UsageError(f"--image {name}: no such file")
        size = path.stat().st_size
        if size > IMAGE_MAX_BYTES:
            raise UsageError(
                f"--image {name} is {size:,} bytes, over the {IMAGE_MAX_BYTES:,} an image "
                "may hold: attach a smaller or downscaled copy"
            )
        data = path.read_bytes()
        if sniff_image(data) is None:
            raise UsageError(f"--image {name} is not a PNG, JPEG, GIF or WebP image")
        images.append(ImageArg(data=base64.b64encode(data).decode("ascii"), name=path.name))
    return tuple(images)
