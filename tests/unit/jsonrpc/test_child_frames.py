"""The child endpoint's frame reader against hostile output: frames as peers
write them (header case, line ends, extra headers, any order) are read;
every frame no one can delimit, a header line of garbage, a run of headers
that never ends and a ``Content-Length`` past :data:`MAX_FRAME` are refused
at once, before anything is allocated for the body."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rhema_lsp.jsonrpc.child import MAX_FRAME, MAX_HEADER, MAX_HEADERS, StdioEndpoint
from tests.fakes.hostile import BAD_FRAMES, examples, lsp_frames


def endpoint(data: bytes) -> StdioEndpoint:
    reader = asyncio.StreamReader(limit=64 << 10)
    reader.feed_data(data)
    reader.feed_eof()
    process: Any = SimpleNamespace(stdin=object(), stdout=reader)
    return StdioEndpoint(process)


async def read_all(data: bytes) -> list[dict[str, Any]]:
    reading = endpoint(data)
    found = []
    while (message := await reading._read_message()) is not None:
        found.append(message)
    return found


@settings(max_examples=examples(60))
@given(st.data())
def test_frames_as_peers_write_them_are_read(data: st.DataObject) -> None:
    bodies = [{"jsonrpc": "2.0", "id": n, "result": {"n": n}} for n in range(3)]
    stream = b"".join(data.draw(lsp_frames(json.dumps(body).encode())) for body in bodies)
    assert asyncio.run(read_all(stream)) == bodies


GARBAGE = [
    *BAD_FRAMES,
    b"Traceback (most recent call last):\n  File x\n\n",
    b"INFO: starting\n" * (MAX_HEADERS + 1) + b"\r\n",
    b"X" * (MAX_HEADER + 1) + b": 1\r\n\r\n",
    b"Content-Length: %d\r\n\r\n" % (MAX_FRAME + 1),
    b"Content-Length: 2\r\n\r\n[]",
]


@pytest.mark.parametrize("garbage", GARBAGE, ids=[str(n) for n in range(len(GARBAGE))])
async def test_garbage_is_refused_at_once(garbage: bytes) -> None:
    refused = "not LSP|Content-Length|frame of|header line|JSON object|limit"
    with pytest.raises(ValueError, match=refused):  # what the read loop takes for garbage
        await asyncio.wait_for(read_all(garbage), 1.0)
