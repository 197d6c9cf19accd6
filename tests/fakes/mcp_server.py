"""A small MCP server written with the SDK, for the MCP client's tests.

``python -m tests.fakes.mcp_server stdio`` serves over stdio;
``python -m tests.fakes.mcp_server http PORT`` serves Streamable HTTP on
``127.0.0.1:PORT/mcp`` and prints ``ready`` once it listens;
``python -m tests.fakes.mcp_server hang`` never answers ``initialize``.

Tools: ``echo`` (text), ``boom`` (fails in-band), ``picture`` (an image and
a resource link), ``nested`` (a schema with ``$defs``), ``where`` (its
working directory), ``slow`` (waits; writes the file
``$FAKE_MCP_MARKS/cancelled`` when the call is cancelled) and ``crash`` (the
process exits). Every start appends a line to ``$FAKE_MCP_MARKS/starts``;
``$FAKE_MCP_SECRET`` is echoed by ``whoami`` (or ``unset``), and stderr gets
a line at start.
"""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ImageContent, ResourceLink
from pydantic import BaseModel

app = MCPServer("fake-mcp")
MARKS = Path(os.environ.get("FAKE_MCP_MARKS", "."))
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


class Point(BaseModel):
    x: int
    y: int


@app.tool(description="Say the text back.")
def echo(text: str) -> str:
    return f"echo: {text}"


@app.tool(description="Always fails.")
def boom() -> str:
    raise ValueError("the boom tool always fails")


@app.tool(description="What FAKE_MCP_SECRET is in this server's environment.")
def whoami() -> str:
    return os.environ.get("FAKE_MCP_SECRET", "unset") + " " + str("OPENAI_API_KEY" in os.environ)


@app.tool(description="This server's working directory.")
def where() -> str:
    return os.getcwd()


@app.tool(description="An image and a link.")
def picture() -> list[ImageContent | ResourceLink]:
    link = ResourceLink(name="readme", uri="file:///readme.md", description="the readme")
    image = ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png")
    return [image, link]


@app.tool(description="Takes a point.")
def nested(point: Point, label: str | None = None) -> str:
    return f"{label or 'point'} at {point.x},{point.y}"


@app.tool(description="Waits a long time.")
async def slow(seconds: float = 30.0) -> str:
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        (MARKS / "cancelled").write_text("cancelled\n")
        raise
    return "done"


@app.tool(description="Exits the server process.")
def crash() -> str:
    os._exit(3)


def main() -> None:
    with (MARKS / "starts").open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    print("fake-mcp starting", file=sys.stderr, flush=True)
    if sys.argv[1] == "hang":
        sys.stdin.read()  # never answers; ends when the client closes stdin
        return
    if sys.argv[1] == "stdio":
        app.run("stdio")
        return
    port = int(sys.argv[2])
    print("ready", flush=True)
    app.run("streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
