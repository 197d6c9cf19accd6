"""A stand-in for ``rhema-lsp serve``: just enough of the editor contract over stdio.

It lets the VS Code harness prove the extension end to end before the real
server exists: ``initialize`` (advertising the contract's commands),
``rhema.status``, ``rhema.sessions``/``rhema.openSession`` over the sessions it
ran, and ``rhema.turn``, which streams ``rhema/event`` notifications (reasoning,
then the answer in small deltas) and honours ``$/cancelRequest`` and
``rhema.cancel`` between deltas. A prompt containing ``slow`` streams slowly
enough to cancel mid-stream; one containing ``edit`` makes an ``edit_file`` call that
inserts ``EDIT_LINE`` at the top of the first ``context`` document through
``workspace/applyEdit``. ``rhema.status`` reports the model from ``initializationOptions``
and the mode from the ``rhema`` section of ``workspace/configuration``; each cancel is
logged to stderr (the client's "Rhema Server" channel) naming the path it came by.
Stdlib only; one reader thread, one thread per run.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from typing import Any, BinaryIO

VERSION = "0.0-fake"
REASONING = "The user greets me.\nA short friendly answer fits."
ANSWER = "Hello from the fake Rhema server. Streaming works end to end."
EDIT_LINE = "# edited by rhema\n"
EDIT_ANSWER = "Added a header line."
SLOW_ANSWER = " ".join(f"word{i}" for i in range(200))
COMMANDS = [
    "rhema.turn",
    "rhema.step",
    "rhema.cancel",
    "rhema.sessions",
    "rhema.openSession",
    "rhema.deleteSession",
    "rhema.edit",
    "rhema.undoTurn",
    "rhema.status",
]

Json = dict[str, Any]


class Connection:
    """JSON-RPC framing over binary stdio; writes are serialised by a lock."""

    def __init__(self, reader: BinaryIO, writer: BinaryIO) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = threading.Lock()

    def read(self) -> Json | None:
        """Read one message, or ``None`` at end of input."""
        length = 0
        while True:
            line = self._reader.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        message: Json = json.loads(self._reader.read(length))
        return message

    def send(self, message: Json) -> None:
        """Write one message."""
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        with self._lock:
            self._writer.write(f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body)
            self._writer.flush()


class FakeServer:
    """Dispatches requests; runs turns in threads so cancellation can arrive."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._cancelled: dict[int | str, threading.Event] = {}
        self._runs: dict[str, threading.Event] = {}
        self._sessions: dict[str, Json] = {}
        self._seq: dict[str, int] = {}
        self._lock = threading.Lock()
        self._replies: dict[str, tuple[threading.Event, list[Json]]] = {}
        self._init_options: Json = {}
        self._config: Json = {}

    def serve(self) -> None:
        """Read and dispatch until ``exit`` or end of input."""
        while (message := self._connection.read()) is not None:
            method = message.get("method")
            if method == "exit":
                return
            if method == "$/cancelRequest":
                event = self._cancelled.get(message["params"]["id"])
                if event is not None:
                    print(
                        f"fake: cancel by $/cancelRequest {message['params']['id']}",
                        file=sys.stderr,
                        flush=True,
                    )
                    event.set()
            elif method == "initialized":
                threading.Thread(target=self._pull_configuration, daemon=True).start()
            elif "id" in message and method is not None:
                self._request(message["id"], method, message.get("params") or {})
            elif "id" in message and str(message["id"]) in self._replies:
                done, box = self._replies[str(message["id"])]
                box.append(message)
                done.set()

    def _request(self, request_id: int | str, method: str, params: Json) -> None:
        if method == "initialize":
            self._init_options = params.get("initializationOptions") or {}
            workspace_caps = (params.get("capabilities") or {}).get("workspace") or {}
            execute_caps = workspace_caps.get("executeCommand")
            print(
                f"fake: client executeCommand capability: {execute_caps}",
                file=sys.stderr,
                flush=True,
            )
            self._reply(
                request_id,
                {
                    "capabilities": {
                        "textDocumentSync": {"openClose": True, "change": 2},
                        "executeCommandProvider": {"commands": COMMANDS},
                    },
                    "serverInfo": {"name": "rhema-lsp-fake", "version": VERSION},
                },
            )
        elif method == "shutdown":
            self._reply(request_id, None)
        elif method == "workspace/executeCommand":
            args: Json = (params.get("arguments") or [{}])[0]
            self._command(request_id, params["command"], args, params.get("workDoneToken"))
        else:
            self._connection.send(
                {"id": request_id, "error": {"code": -32601, "message": f"no {method}"}}
            )

    def _command(self, request_id: int | str, command: str, args: Json, token: Any) -> None:
        if command == "rhema.status":
            self._reply(
                request_id,
                {
                    "version": VERSION,
                    "provider": {
                        "name": "fake",
                        "model": self._init_options.get("model", "fake-model"),
                        "baseUrl": None,
                        "source": "stand-in",
                    },
                    "folders": [],
                    "mode": self._config.get("mode", "edit"),
                    "running": list(self._runs),
                },
            )
        elif command == "rhema.turn":
            cancelled = threading.Event()
            self._cancelled[request_id] = cancelled
            threading.Thread(
                target=self._turn, args=(request_id, args, token, cancelled), daemon=True
            ).start()
        elif command == "rhema.cancel":
            wanted = args.get("session")
            stopped = [s for s in self._runs if wanted in (None, s)]
            for session in stopped:
                print(f"fake: cancel by rhema.cancel {session}", file=sys.stderr, flush=True)
                self._runs[session].set()
            self._reply(request_id, {"cancelled": stopped})
        elif command == "rhema.sessions":
            self._reply(request_id, list(self._sessions.values()))
        elif command == "rhema.openSession":
            summary = self._sessions[args["session"]]
            self._reply(
                request_id,
                {
                    "session": summary["session"],
                    "folder": summary["folder"],
                    "title": summary["title"],
                    "messages": summary.pop("messages", []),
                    "resumed": {"rerun": [], "interrupted": []},
                },
            )
        else:
            self._connection.send(
                {"id": request_id, "error": {"code": -32602, "message": f"fake: no {command}"}}
            )

    def _turn(
        self, request_id: int | str, args: Json, token: Any, cancelled: threading.Event
    ) -> None:
        session = args.get("session") or f"s-{uuid.uuid4().hex[:8]}"
        self._runs[session] = cancelled
        prompt = str(args.get("prompt", ""))
        slow = "slow" in prompt
        answer = SLOW_ANSWER if slow else ANSWER
        if "edit" in prompt:
            answer = EDIT_ANSWER
        delay = 0.15 if slow else 0.02
        if token is not None:
            self._progress(
                token,
                {"kind": "begin", "title": "Rhema", "cancellable": True, "message": "thinking"},
            )
        self._event(session, {"type": "step_start", "iteration": 1})
        for line in REASONING.splitlines(keepends=True):
            self._event(session, {"type": "thinking_delta", "text": line})
        if "edit" in prompt:
            self._edit(session, args)
        if token is not None:
            self._progress(token, {"kind": "report", "message": "writing"})
        sent = 0
        stop = "end_turn"
        for index in range(0, len(answer), 7):
            if cancelled.is_set():
                stop = "cancelled"
                break
            chunk = answer[index : index + 7]
            self._event(session, {"type": "text_delta", "text": chunk})
            sent += len(chunk)
            time.sleep(delay)
        usage = {"input": 42, "output": sent // 4}
        text = answer[:sent]
        self._event(session, {"type": "step_end", "usage": usage, "stopReason": stop})
        self._event(
            session,
            {"type": "turn_end", "stopReason": stop, "text": text, "steps": 1, "usage": usage},
        )
        if token is not None:
            self._progress(token, {"kind": "end", "message": stop})
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        summary = self._sessions.setdefault(
            session,
            {
                "session": session,
                "folder": args.get("folder", ""),
                "title": prompt[:40],
                "createdAt": now,
                "updatedAt": now,
                "turns": 0,
                "running": False,
                "messages": [],
            },
        )
        summary["turns"] += 1
        summary["updatedAt"] = now
        summary.setdefault("messages", []).extend(
            [
                {"role": "user", "content": [{"type": "text", "text": prompt}]},
                {"role": "assistant", "content": [{"type": "text", "text": text}]},
            ]
        )
        self._runs.pop(session, None)
        self._cancelled.pop(request_id, None)
        self._reply(
            request_id,
            {
                "session": session,
                "turn": summary["turns"],
                "stopReason": stop,
                "text": text,
                "steps": 1,
                "usage": usage,
            },
        )

    def _edit(self, session: str, args: Json) -> None:
        uri = str(args["context"][0]["uri"])
        self._event(session, {"type": "tool_call_start", "id": "c1", "name": "edit_file"})
        self._event(
            session,
            {
                "type": "tool_call_args_delta",
                "id": "c1",
                "delta": json.dumps({"path": uri.rsplit("/", 1)[-1]}),
            },
        )
        start = {"line": 0, "character": 0}
        reply = self._client_request(
            "workspace/applyEdit",
            {
                "label": "edit_file " + uri.rsplit("/", 1)[-1],
                "edit": {
                    "changes": {
                        uri: [{"range": {"start": start, "end": start}, "newText": EDIT_LINE}]
                    }
                },
            },
        )
        applied = bool((reply.get("result") or {}).get("applied"))
        self._event(
            session,
            {
                "type": "tool_result",
                "id": "c1",
                "name": "edit_file",
                "content": "edited" if applied else "edit rejected",
                "isError": not applied,
            },
        )

    def _pull_configuration(self) -> None:
        reply = self._client_request("workspace/configuration", {"items": [{"section": "rhema"}]})
        result = reply.get("result")
        if isinstance(result, list) and result and isinstance(result[0], dict):
            self._config = result[0]

    def _client_request(self, method: str, params: Json) -> Json:
        request_id = f"fake-{uuid.uuid4().hex[:8]}"
        done = threading.Event()
        box: list[Json] = []
        self._replies[request_id] = (done, box)
        self._connection.send({"id": request_id, "method": method, "params": params})
        done.wait(timeout=30)
        self._replies.pop(request_id, None)
        return box[0] if box else {}

    def _event(self, session: str, event: Json) -> None:
        with self._lock:
            seq = self._seq.get(session, 0) + 1
            self._seq[session] = seq
        turn = self._sessions.get(session, {}).get("turns", 0) + 1
        self._connection.send(
            {
                "method": "rhema/event",
                "params": {"session": session, "turn": turn, "seq": seq, "event": event},
            }
        )

    def _progress(self, token: Any, value: Json) -> None:
        self._connection.send({"method": "$/progress", "params": {"token": token, "value": value}})

    def _reply(self, request_id: int | str, result: Any) -> None:
        self._connection.send({"id": request_id, "result": result})


def main() -> None:
    """Serve one client on stdin/stdout."""
    FakeServer(Connection(sys.stdin.buffer, sys.stdout.buffer)).serve()


if __name__ == "__main__":
    main()
