"""An MCP resource in a prompt's ``context`` (a ref naming a ``server``):
read through the reader the door passes (the hub in the server), capped as
a file is, refused with the ref named when it cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from rhema_lsp.contract import ContextRef
from rhema_lsp.mcp.errors import McpUnavailable
from rhema_lsp.runs.context import CONTEXT_MAX_BYTES, ContextRefused, read_attachments
from rhema_lsp.tools import MemoryEditor

NOTES = {("notes", "mem://a"): "alpha notes", ("notes", "mem://big"): "x" * (CONTEXT_MAX_BYTES + 1)}


async def reader(server: str, uri: str) -> str:
    if (server, uri) not in NOTES:
        raise McpUnavailable(f"the MCP server {server} has no resource {uri}")
    return NOTES[(server, uri)]


async def read(tmp_path: Path, *refs: ContextRef, with_reader: bool = True) -> list[str]:
    (tmp_path / "main.py").write_text("print('hi')\n")
    found = await read_attachments(
        refs,
        [tmp_path],
        tmp_path,
        MemoryEditor([tmp_path]),
        lambda p: p.name,
        reader if with_reader else None,
    )
    return [f"{piece.path}: {piece.text}" for piece in found.pieces]


async def test_a_resource_is_read_through_its_server_beside_files(tmp_path: Path) -> None:
    pieces = await read(
        tmp_path,
        ContextRef(uri=(tmp_path / "main.py").as_uri()),
        ContextRef(server="notes", uri="mem://a"),
    )
    assert pieces == ["main.py: print('hi')\n", "mem://a (MCP server notes): alpha notes"]


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        (
            ContextRef(server="notes", uri="mem://gone"),
            "could not be read: .*no resource mem://gone",
        ),
        (ContextRef(server="notes", uri="mem://big"), f"larger than {CONTEXT_MAX_BYTES} bytes"),
        (
            ContextRef.model_validate(
                {
                    "server": "notes",
                    "uri": "mem://a",
                    "range": {
                        "start": {"line": 0, "character": 0},
                        "end": {"line": 0, "character": 1},
                    },
                }
            ),
            "takes no range",
        ),
    ],
)
async def test_a_resource_that_cannot_be_attached_refuses_the_prompt(
    tmp_path: Path, ref: ContextRef, why: str
) -> None:
    with pytest.raises(ContextRefused, match=why) as refused:
        await read(tmp_path, ref)
    assert "of the MCP server notes" in str(refused.value)


async def test_without_a_reader_a_resource_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ContextRefused, match="cannot be attached here"):
        await read(tmp_path, ContextRef(server="notes", uri="mem://a"), with_reader=False)
