"""Many tools: a request never carries more than 128 tools (OpenAI's limit),
and past it (or past a tenth of the model's window) the MCP tools are
deferred behind ``find_tools``, which loads the matching ones into the next
request; a deferred tool is still called when named."""

from __future__ import annotations

from pathlib import Path

import pytest

from rhema_lsp.mcp.hub import McpHub
from rhema_lsp.tools import MemoryEditor
from tests.unit.mcp.conftest import fake_stdio
from tests.unit.mcp.test_servers import Options, call, inner

pytestmark = pytest.mark.process  # starts child processes


async def test_150_tools_are_deferred_and_found(hub: McpHub, tmp_path: Path, marks: Path) -> None:
    editor = MemoryEditor([tmp_path])
    many = fake_stdio(marks, allow=["*"])
    many.env["FAKE_MCP_MANY"] = "150"
    options = Options({"fake": many})
    resolver = await hub.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options
    )

    first = [spec.name for spec in resolver.specs()]
    assert len(first) <= 128
    assert "find_tools" in first and "read_file" in first
    assert not [name for name in first if name.startswith("fake__")]
    find = next(spec for spec in resolver.specs() if spec.name == "find_tools")
    assert "167 more tools" in find.description and "fake (167)" in find.description

    found = await call(resolver, "find_tools", {"query": "convert celsius to fahrenheit"})

    assert not found.is_error
    assert found.content.splitlines()[1].startswith("- fake__tool_042: [MCP server fake] Converts")
    after = [spec.name for spec in resolver.specs()]
    assert "fake__tool_042" in after and len(after) <= 128
    answered = await call(resolver, "fake__tool_042", {"value": "20"})
    assert answered.content == "tool 42 answered 20"
    (report,) = await hub.status(options)
    assert (report.tools, report.deferred) == (167, True)

    exact = await call(resolver, "find_tools", {"query": "select:fake__tool_007,echo"})
    assert [line.split(":")[0] for line in exact.content.splitlines()[1:]] == [
        "- fake__echo",
        "- fake__tool_007",
    ]
    nothing = await call(resolver, "find_tools", {"query": "zzz qqq"})
    assert nothing.is_error and "no MCP tool matched" in nothing.content


async def test_a_small_window_defers_even_a_few_tools(
    hub: McpHub, tmp_path: Path, marks: Path
) -> None:
    editor = MemoryEditor([tmp_path])
    options = Options({"fake": fake_stdio(marks)})
    small = await hub.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options, window=2048
    )
    large = await hub.resolver(
        inner(tmp_path, editor), "agent", tmp_path, editor, "openai", options, window=200_000
    )

    assert "find_tools" in [s.name for s in small.specs()]
    assert "fake__echo" not in [s.name for s in small.specs()]
    assert "fake__echo" in [s.name for s in large.specs()]
    assert "find_tools" not in [s.name for s in large.specs()]
