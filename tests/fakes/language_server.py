"""A scripted language server for the agent's language-server tests, run as
``python language_server.py BEHAVIOUR RECORD [ANSWER]``.

Every start appends one JSON line to ``RECORD``: its environment, its
working directory and the ``initialize`` params it got. It answers
``initialize`` (definition and references offered), publishes empty
diagnostics for every synced version (so a fresh server's first analysis
is over at once), and answers ``shutdown``. Questions (definition,
references) get, by ``BEHAVIOUR``:

- ``ok``: the locations in the JSON file ``ANSWER`` (``[]`` without one);
- ``hang``: nothing, ever;
- ``garbage``: lines of text that are not LSP, and nothing more;
- ``huge``: a frame declaring 100 GB, and nothing more;
- ``hang-start``: (already at ``initialize``) nothing, ever.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any


def read() -> dict[str, Any] | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(sys.stdin.buffer.read(length))
    return message


def send(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def stall() -> None:
    """Answer nothing more, and stay alive until stdin closes (or forever)."""
    while sys.stdin.buffer.read(65536):
        pass
    time.sleep(3600)


def main() -> None:
    behaviour, record = sys.argv[1], sys.argv[2]
    answer: Any = []
    if len(sys.argv) > 3:
        with open(sys.argv[3]) as handle:
            answer = json.load(handle)
    while (message := read()) is not None:
        method = message.get("method")
        params = message.get("params") or {}
        if method == "initialize":
            with open(record, "a") as handle:
                seen = {
                    "env": dict(os.environ),
                    "cwd": os.getcwd(),
                    "pid": os.getpid(),
                    "initialize": params,
                }
                handle.write(json.dumps(seen) + "\n")
            if behaviour == "hang-start":
                stall()
            capabilities = {"definitionProvider": True, "referencesProvider": True}
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": capabilities}})
        elif method in ("textDocument/didOpen", "textDocument/didChange"):
            document = params["textDocument"]
            published = {"uri": document["uri"], "version": document["version"], "diagnostics": []}
            send(
                {"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": published}
            )
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "exit":
            return
        elif "id" in message:
            if behaviour == "hang":
                continue
            if behaviour == "garbage":
                sys.stdout.buffer.write(b"Traceback (most recent call last): not LSP\n" * 50)
                sys.stdout.buffer.flush()
                stall()
            if behaviour == "huge":
                sys.stdout.buffer.write(b"Content-Length: 100000000000\r\n\r\n")
                sys.stdout.buffer.flush()
                stall()
            send({"jsonrpc": "2.0", "id": message["id"], "result": answer})


if __name__ == "__main__":
    main()
