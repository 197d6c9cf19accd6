"""A small MCP server written with the SDK, for the MCP client's tests.

``python -m tests.fakes.mcp_server stdio`` serves over stdio;
``python -m tests.fakes.mcp_server http PORT`` serves Streamable HTTP on
``127.0.0.1:PORT/mcp`` and prints ``ready`` once it listens.

Tools: ``echo`` (text), ``boom`` (fails in-band), ``picture`` (an image and
a resource link), ``nested`` (a schema with ``$defs``), ``where`` (its
working directory), ``slow`` (waits; writes the file
``$FAKE_MCP_MARKS/cancelled`` when the call is cancelled) and ``crash`` (the
process exits); ``steps`` (progress), ``grow`` (adds the tool ``grown``
and sends ``tools/list_changed``), ``ask_model`` (sampling), ``order`` (a
form elicitation: a boolean, an enum and an optional enum), ``sign_up`` (a form of free
text), ``roots``, ``chatty`` (logs at info and debug), ``meet`` (says
``met`` only when two calls of it run at once); in the 2026 era also
``resolved_model``, ``resolved_order`` and ``resolved_roots``, which ask the
same through the SDK's resolvers (Multi Round-Trip Requests). A resource
``fake://notes/readme``, a prompt ``review`` (``path``, ``focus``), and
``$FAKE_MCP_INSTRUCTIONS`` as its instructions.
``$FAKE_MCP_MANY=N`` adds the tools ``tool_000`` ... (``tool_042`` converts
Celsius to Fahrenheit, the others look up inventory records).
It speaks the handshake era (``initialize``, sessions) as
servers written before 2026 do, or the 2026 era with ``FAKE_MCP_ERA=modern``.
Every start appends a line to ``$FAKE_MCP_MARKS/starts``;
``$FAKE_MCP_SECRET`` is echoed by ``whoami`` (or ``unset``), and stderr gets
a line at start.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Annotated, Literal

import anyio
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.message import SessionMessage
from mcp_types import (
    METHOD_NOT_FOUND,
    CreateMessageResult,
    ErrorData,
    ImageContent,
    JSONRPCError,
    JSONRPCRequest,
    ListRootsResult,
    RequestId,
    ResourceLink,
    SamplingMessage,
    TextContent,
)
from pydantic import BaseModel
from starlette.types import ASGIApp, Message, Receive, Scope, Send

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)  # logging, sampling, roots
app = MCPServer("fake-mcp", instructions=os.environ.get("FAKE_MCP_INSTRUCTIONS"))
MARKS = Path(os.environ.get("FAKE_MCP_MARKS", "."))
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


OUTAGE = "the backend is down for maintenance until 14:00"


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


@app.tool(description="Answered by the HTTP layer with a 503 (see with_outage()).")
def outage() -> str:
    return "not reached over HTTP"


@app.tool(description="Reports progress in steps, then says done.")
async def steps(count: int, ctx: Context) -> str:
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"step {step}")
    return f"{count} steps done"


@app.tool(description="Adds the tool `grown` and says the tool list changed.")
async def grow(ctx: Context) -> str:
    app.add_tool(grown, description="Only there once `grow` ran.")
    await ctx.session.send_tool_list_changed()
    return "grown"


def grown() -> str:
    return "the new tool answered"


@app.tool(description="Asks the client's model (sampling) and says what it answered.")
async def ask_model(question: str, ctx: Context) -> str:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=question))
    try:
        answer = await ctx.session.create_message(
            [message], max_tokens=50, system_prompt="Answer in one word."
        )
    except MCPError as exc:
        return f"sampling refused: {exc.message} ({exc.code})"
    text = answer.content.text if isinstance(answer.content, TextContent) else "?"
    return f"the model said: {text} ({answer.model})"


class Order(BaseModel):
    confirm: bool
    size: Literal["small", "large"]
    crust: Literal["thin", "thick"] = "thin"


@app.tool(description="Asks the user to confirm an order (elicitation).")
async def order(ctx: Context) -> str:
    result = await ctx.elicit("Confirm the pizza order", Order)
    if result.action == "accept":
        data = result.data
        crust = data.crust if "crust" in data.model_fields_set else "(left out)"
        return f"ordered: confirm={data.confirm} size={data.size} crust={crust}"
    return f"no order: {result.action}"


class Member(BaseModel):
    name: str
    age: int
    team: str = "blue"


@app.tool(description="Asks the user to sign up (a form of free-text fields).")
async def sign_up(ctx: Context) -> str:
    result = await ctx.elicit("Sign up for the club", Member)
    if result.action == "accept":
        return f"member: {result.data.name}, {result.data.age}, {result.data.team}"
    return f"no member: {result.action}"


@app.tool(description="The client's roots.")
async def roots(ctx: Context) -> str:
    listed = await ctx.session.list_roots()
    return " ".join(str(root.uri) for root in listed.roots) or "(no roots)"


def _ask_model(question: str) -> Sample:
    text = TextContent(type="text", text=question)
    return Sample([SamplingMessage(role="user", content=text)], max_tokens=50)


def _ask_order() -> Elicit[Order]:
    return Elicit("Confirm the pizza order", Order)


def _ask_roots() -> ListRoots:
    return ListRoots()


async def resolved_model(
    question: str, answer: Annotated[CreateMessageResult, Resolve(_ask_model)]
) -> str:
    text = answer.content.text if isinstance(answer.content, TextContent) else "?"
    return f"the model said: {text}"


async def resolved_order(result: Annotated[ElicitationResult[Order], Resolve(_ask_order)]) -> str:
    if isinstance(result, AcceptedElicitation):
        return f"ordered: size={result.data.size}"
    return f"no order: {result.action}"


async def resolved_roots(listed: Annotated[ListRootsResult, Resolve(_ask_roots)]) -> str:
    return " ".join(str(root.uri) for root in listed.roots) or "(no roots)"


@app.tool(description="Logs at info and at debug.")
async def chatty(ctx: Context) -> str:
    await ctx.info("chatty says hello at info")
    await ctx.debug("chatty at debug, which the client did not ask for")
    return "logged"


@app.resource("fake://notes/readme", name="readme", description="The notes' readme.")
def readme() -> str:
    return "the readme of the notes: read me first"


@app.prompt(description="Asks for a review of one file.")
def review(path: str, focus: str = "bugs") -> str:
    return f"Review {path}, looking for {focus}."


_INSIDE: list[anyio.Event] = []


@app.tool(description="Waits (up to 10 s) for a second call of `meet` to be running too.")
async def meet() -> str:
    arrived = anyio.Event()
    for other in _INSIDE:  # the calls already waiting: this one has come
        other.set()
    _INSIDE.append(arrived)
    if len(_INSIDE) < 2:
        with anyio.move_on_after(10):
            await arrived.wait()
            return "met"
        return "alone"
    return "met"


@app.tool(description="Exits the server process.")
def crash() -> str:
    os._exit(3)


def _numbered(number: int) -> None:
    def answer(value: str = "") -> str:
        return f"tool {number} answered {value}".strip()

    about = (
        "Converts a temperature from Celsius to Fahrenheit."
        if number == 42
        else f"Looks up record number {number} of the inventory."
    )
    app.add_tool(answer, name=f"tool_{number:03d}", description=about)


for _number in range(int(os.environ.get("FAKE_MCP_MANY", "0"))):
    _numbered(_number)


LEGACY = os.environ.get("FAKE_MCP_ERA") != "modern"
if not LEGACY:
    app.add_tool(resolved_model, description="Asks the client's model (a resolver).")
    app.add_tool(resolved_order, description="Asks for an order (a resolver).")
    app.add_tool(resolved_roots, description="The client's roots (a resolver).")


def _unknown_method(request_id: RequestId) -> JSONRPCError:
    """What a server written before 2026 answers to ``server/discover``."""
    error = ErrorData(code=METHOD_NOT_FOUND, message="Method not found")
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


async def serve_stdio() -> None:
    """stdio; in the handshake era ``server/discover`` is refused before the
    SDK sees it (the SDK would take it as the 2026 era's opening)."""
    server = app._lowlevel_server
    async with stdio_server() as (read, write):
        if not LEGACY:
            await server.run(read, write, server.create_initialization_options())
            return
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def refuse_discover() -> None:
            async with send:
                async for item in read:
                    message = getattr(item, "message", None)
                    if isinstance(message, JSONRPCRequest) and message.method == "server/discover":
                        await write.send(SessionMessage(_unknown_method(message.id)))
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(refuse_discover)
            await server.run(receive, write, server.create_initialization_options())
            group.cancel_scope.cancel()


def main() -> None:
    with (MARKS / "starts").open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    print("fake-mcp starting", file=sys.stderr, flush=True)
    if sys.argv[1] == "stdio":
        anyio.run(serve_stdio)
        return
    anyio.run(serve_http, int(sys.argv[2]))


async def serve_http(port: int) -> None:
    """Streamable HTTP on loopback, behind :func:`with_outage`."""
    import uvicorn

    inner = app.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(with_outage(inner), host="127.0.0.1", port=port, log_level="warning")
    print("ready", flush=True)
    await uvicorn.Server(config).serve()


def with_outage(inner: ASGIApp) -> ASGIApp:
    """``inner``, except that a call of the tool ``outage`` is answered at
    the HTTP level: 503 with a plain-text body, as a proxy in front of a
    broken backend would."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await inner(scope, receive, send)
            return
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if LEGACY and b'"method":"server/discover"' in body.replace(b" ", b""):
            answer = _unknown_method(json.loads(body)["id"]).model_dump_json(by_alias=True)
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})  # fmt: skip
            await send({"type": "http.response.body", "body": answer.encode()})
            return
        if b'"name":"outage"' in body.replace(b" ", b""):
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"text/plain")]})  # fmt: skip
            await send({"type": "http.response.body", "body": OUTAGE.encode()})
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await inner(scope, replay, send)

    return wrapped


if __name__ == "__main__":
    main()
