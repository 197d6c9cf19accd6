"""FdReader and FdWriter: bytes in and out on pipes, regular files and
character devices alike, in order, with the end of the stream said once."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from rhema_lsp.jsonrpc.stdio import QUEUED, FdReader, FdWriter


async def read_all(reader: FdReader) -> bytes:
    data = b""
    while chunk := await reader.read():
        data += chunk
    assert await reader.read() == b""  # and on every call after
    return data


async def test_a_pipe_is_read_in_order_to_its_end() -> None:
    read_end, write_end = os.pipe()
    payload = bytes(range(256)) * 2000
    os.write(write_end, payload[:1000])
    reader = FdReader(read_end)
    first = await reader.read()
    writer = FdWriter(write_end)

    async def write_the_rest() -> None:  # while the reader reads: the pipe holds 64 KiB
        await writer.write(payload[1000:])
        await writer.aclose()
        os.close(write_end)

    _, rest = await asyncio.gather(write_the_rest(), read_all(reader))

    assert first + rest == payload
    os.close(read_end)


async def test_a_regular_file_and_dev_null_are_read_too(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"a": 1}\n' * (QUEUED * 20000))
    file, null = os.open(path, os.O_RDONLY), os.open(os.devnull, os.O_RDONLY)
    try:
        assert await read_all(FdReader(file)) == path.read_bytes()
        assert await read_all(FdReader(null)) == b""
    finally:
        os.close(file)
        os.close(null)


async def test_a_regular_file_is_written_whole_and_in_order(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    file = os.open(path, os.O_WRONLY | os.O_CREAT)
    writer = FdWriter(file)
    for index in range(200):
        await writer.write(b"%d\n" % index)
    await writer.aclose()
    os.close(file)

    assert path.read_bytes() == b"".join(b"%d\n" % index for index in range(200))


async def test_writing_to_a_pipe_nobody_reads_is_a_broken_pipe() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    writer = FdWriter(write_end)

    with pytest.raises(BrokenPipeError):
        await writer.write(b"hello\n")
    await writer.aclose()
    os.close(write_end)
