"""A scripted MCP server of the 2026-07-28 protocol only, without the SDK
(it starts in a tenth of a second):
``python -m tests.fakes.mcp_modern stdio`` or ``... http PORT`` (Streamable
HTTP on ``127.0.0.1:PORT/mcp``, each request one POST, no session id).

It answers ``server/discover`` (2026-07-28) and refuses ``initialize`` with
-32022 naming its versions, as a modern-only server should. Tools: ``echo``
(text back), ``ask_model`` (sampling), ``order`` (a form elicitation) and
``roots``, each of the last three through a Multi Round-Trip Request (an
``input_required`` result, answered by the client's retry carrying
``inputResponses``); ``grow`` adds the tool ``grown`` and tells every
``subscriptions/listen`` stream that asked for ``toolsListChanged``;
``pester`` asks for the roots in every answer; ``crash`` exits. Lists
carry ``ttlMs`` (``FAKE_MODERN_TTL``: tools/list, ``FAKE_MODERN_PROMPTS_TTL``:
prompts/list; milliseconds, default 0).

``FAKE_MODERN_MARKS`` is a folder; every request's and notification's method
is appended to its ``methods`` file, each start's pid to ``starts``. ``FAKE_MODERN_LISTEN=0``
declares no ``listChanged``; ``=refuse`` declares it and answers
``subscriptions/listen`` with -32601. ``FAKE_MODERN_MODE`` makes it hostile:

- ``legacy``: a 2025-06-18 server: the probe is -32601 (stdio) or HTTP 400
  with a plain body (HTTP);
- ``claims``: answers the probe as 2026-07-28, then wants ``initialize``
  before anything else, as a 2025-06-18 server does;
- ``garbled``, ``unversioned``, ``old``: ``server/discover`` answered with a
  string, without ``supportedVersions``, or with only 2025-06-18;
- ``foreign``: -32022 naming only a version nobody speaks.

Every mode but the default and ``foreign`` serves the 2025-06-18 handshake
after its probe answer (the client falls back to it).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
MODE = os.environ.get("FAKE_MODERN_MODE", "modern")
MARKS = Path(os.environ.get("FAKE_MODERN_MARKS", "."))
LISTEN = os.environ.get("FAKE_MODERN_LISTEN", "1") != "0"
REFUSE_LISTEN = os.environ.get("FAKE_MODERN_LISTEN") == "refuse"
TTL = {
    "tools/list": int(os.environ.get("FAKE_MODERN_TTL", "0")),
    "prompts/list": int(os.environ.get("FAKE_MODERN_PROMPTS_TTL", "0")),
}


def entry(marks: Path, **env: str) -> dict[str, Any]:
    """An ``mcpServers`` entry that runs this server over stdio with ``env``."""
    return {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_modern", "stdio"],
        "env": {"FAKE_MODERN_MARKS": str(marks), "PYTHONPATH": str(ROOT), **env},
        "allow": ["*"],
    }


def methods(marks: Path) -> list[str]:
    """Every method received so far, in order (all starts)."""
    path = marks / "methods"
    return path.read_text().split() if path.exists() else []


def _tool(name: str, about: str, **properties: str) -> dict[str, Any]:
    props = {key: {"type": kind} for key, kind in properties.items()}
    return {"name": name, "description": about,
            "inputSchema": {"type": "object", "properties": props}}  # fmt: skip


TOOLS = [
    _tool("echo", "Say the text back", text="string"),
    _tool("ask_model", "Ask the client's model", question="string"),
    _tool("order", "Order a pizza (asks you)"),
    _tool("roots", "The client's first root"),
    _tool("grow", "Add the tool grown"),
    _tool("pester", "Asks for the roots again and again"),
    _tool("crash", "Exit at once"),
]
GROWN = _tool("grown", "A tool added later")
FORM = {"type": "object", "properties": {"size": {"type": "string", "enum": ["small", "large"]}},
        "required": ["size"]}  # fmt: skip


class Served:
    """The server's state, shared by every request (one process)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tools = list(TOOLS)
        self.initialized = False
        self.listeners: list[Any] = []
        """Callables that send one notification to one listening stream."""

    def grow(self) -> None:
        with self.lock:
            if GROWN not in self.tools:
                self.tools.append(GROWN)
            listeners = list(self.listeners)
        for send in listeners:
            send("notifications/tools/list_changed", {})


STATE = Served()


class Refused(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            self.error["data"] = data


def _complete(**fields: Any) -> dict[str, Any]:
    return {"resultType": "complete", **fields}


def _text(text: str, error: bool = False) -> dict[str, Any]:
    return _complete(content=[{"type": "text", "text": text}], isError=error)


def _discover() -> Any:
    if MODE == "legacy":
        raise Refused(-32601, "Method not found")
    if MODE == "foreign":
        data = {"supported": ["2099-01-01"], "requested": MODERN}
        raise Refused(-32022, "Unsupported protocol version", data)
    versions = {"old": ["2025-06-18"], "unversioned": None}.get(MODE, [MODERN])
    if MODE == "garbled":
        return "yes, I am modern"
    capabilities = {"tools": {"listChanged": LISTEN}, "prompts": {"listChanged": False}}
    result = _complete(capabilities=capabilities, ttlMs=0, cacheScope="public",
                       instructions="Modern scripted server.")  # fmt: skip
    if versions is not None:
        result["supportedVersions"] = versions
    return result


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    if MODE in ("modern", "foreign"):
        raise Refused(
            -32022,
            f"this server speaks only {MODERN}",
            {"supported": [MODERN], "requested": "2025-11-25"},
        )
    STATE.initialized = True
    return {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted-old", "version": "1"}}  # fmt: skip


def _call(params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    answers = params.get("inputResponses") or {}
    if name == "echo":
        return _text(str(arguments.get("text", "")))
    if name == "grow":
        STATE.grow()
        return _text("grown")
    if name == "grown":
        return _text("the new tool answered")
    if name == "crash":
        os._exit(3)
    asks = {
        "ask_model": ("sampling/createMessage", {"messages": [{"role": "user", "content": {
            "type": "text", "text": str(arguments.get("question", "?"))}}], "maxTokens": 50}),
        "order": ("elicitation/create", {"mode": "form", "message": "Which size?",
                                         "requestedSchema": FORM}),
        "roots": ("roots/list", {}),
    }  # fmt: skip
    if name == "pester":
        return {"resultType": "input_required",
                "inputRequests": {"answer": {"method": "roots/list", "params": {}}}}  # fmt: skip
    if name not in asks:
        return _text(f"unknown tool {name}", error=True)
    if "answer" not in answers:
        method, asked = asks[name]
        return {"resultType": "input_required", "requestState": f"state-{name}",
                "inputRequests": {"answer": {"method": method, "params": asked}}}  # fmt: skip
    if params.get("requestState") != f"state-{name}":
        return _text("the request state was not echoed", error=True)
    answer = answers["answer"]
    if name == "ask_model":
        return _text(f"the model said: {answer['content']['text']}")
    if name == "order":
        if answer.get("action") != "accept":
            return _text(f"no order: {answer.get('action')}")
        return _text(f"ordered: {answer['content']['size']}")
    roots = answer.get("roots") or []
    return _text(roots[0]["uri"] if roots else "no roots")


def answer(method: str, params: dict[str, Any]) -> Any:
    """The result of one request (raises :class:`Refused` for an error)."""
    with (MARKS / "methods").open("a") as handle:
        handle.write(method + "\n")
    if method == "server/discover":
        return _discover()
    if method == "initialize":
        return _initialize(params)
    legacy = MODE not in ("modern", "foreign")
    if legacy and not STATE.initialized:
        raise Refused(-32600, "Received request before initialization was complete")
    if method == "ping":
        return {}
    if method == "tools/list":
        with STATE.lock:
            tools = list(STATE.tools)
        return _complete(tools=tools, ttlMs=TTL["tools/list"], cacheScope="public")
    if method == "prompts/list":
        return _complete(prompts=[], ttlMs=TTL["prompts/list"], cacheScope="public")
    if method == "tools/call":
        return _call(params)
    raise Refused(-32601, f"Method not found: {method}")


def _reply(message: dict[str, Any]) -> dict[str, Any] | None:
    """The response to one message (None for a notification)."""
    if "method" not in message:
        return None
    if "id" not in message:  # a notification: recorded, never answered
        with (MARKS / "methods").open("a") as handle:
            handle.write(message["method"] + "\n")
        return None
    try:
        result = answer(message["method"], message.get("params") or {})
    except Refused as refused:
        return {"jsonrpc": "2.0", "id": message["id"], "error": refused.error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def _ack(request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    wanted = params.get("notifications") or {}
    honored = {"toolsListChanged": True} if wanted.get("toolsListChanged") and LISTEN else {}
    meta = {"io.modelcontextprotocol/subscriptionId": request_id}
    return {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": meta, "notifications": honored}}  # fmt: skip


def _notice(request_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/subscriptionId": request_id}
    return {"jsonrpc": "2.0", "method": method, "params": {**params, "_meta": meta}}


def serve_stdio() -> None:
    """One JSON message a line; each request answered on its own thread."""
    out = threading.Lock()

    def send(message: dict[str, Any]) -> None:
        with out:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def handle(message: dict[str, Any]) -> None:
        if message.get("method") == "subscriptions/listen" and not REFUSE_LISTEN:
            with (MARKS / "methods").open("a") as marks:
                marks.write("subscriptions/listen\n")
            request_id = message["id"]
            send(_ack(request_id, message.get("params") or {}))
            with STATE.lock:
                STATE.listeners.append(lambda m, p: send(_notice(request_id, m, p)))
            return
        reply = _reply(message)
        if reply is not None:
            send(reply)

    for line in sys.stdin:
        if line.strip():
            threading.Thread(target=handle, args=(json.loads(line),), daemon=True).start()


class Handler(BaseHTTPRequestHandler):
    """Streamable HTTP of 2026-07-28: one POST, one answer; ``subscriptions/listen``
    is an SSE stream that stays open."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(405, b"", "text/plain")

    def do_DELETE(self) -> None:
        self._send(405, b"", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        message = json.loads(self.rfile.read(length))
        if MODE == "legacy" and message.get("method") == "server/discover":
            with (MARKS / "methods").open("a") as marks:
                marks.write("server/discover\n")
            self._send(400, b"Bad Request: no valid session ID provided", "text/plain")
            return
        if message.get("method") == "subscriptions/listen" and not REFUSE_LISTEN:
            self._listen(message)
            return
        reply = _reply(message)
        if reply is None:
            self._send(202, b"")
            return
        code = reply.get("error", {}).get("code")
        status = {-32022: 400, -32601: 404 if MODE == "modern" else 200}.get(code, 200)
        self._send(status, json.dumps(reply).encode())  # the statuses the spec gives

    def _listen(self, message: dict[str, Any]) -> None:
        with (MARKS / "methods").open("a") as marks:
            marks.write("subscriptions/listen\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        gone = threading.Event()

        def event(payload: dict[str, Any]) -> None:
            try:
                self.wfile.write(f"event: message\ndata: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()
            except OSError:
                gone.set()

        request_id = message["id"]
        event(_ack(request_id, message.get("params") or {}))
        with STATE.lock:
            STATE.listeners.append(lambda m, p: event(_notice(request_id, m, p)))
        gone.wait()
        self.close_connection = True


def main() -> None:
    with (MARKS / "starts").open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    if sys.argv[1] == "stdio":
        serve_stdio()
        return
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler)
    server.daemon_threads = True
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
