"""A scriptable fake model server: real HTTP on 127.0.0.1, one reply per request.

Usage from sync or async tests (it serves from a background thread)::

    from tests.fakes.model_server import FakeModelServer, text_reply, tool_reply

    with FakeModelServer(wire="openai") as server:
        server.script(text_reply("Hello"), tool_reply(("read_file", {"path": "a.py"})))
        settings = ProviderSettings(provider="custom", protocol="openai",
                                    base_url=server.base_url, model="fake-model")
        ...
        assert server.requests[0]["messages"][-1]["content"] == "hi"

API (kept stable for every test suite that uses it):

- ``FakeModelServer(wire="openai"|"anthropic"|"gemini", *, repeat_last=False)``;
  a context manager, or ``start()`` / ``stop()``.
- ``base_url``: what ``ProviderSettings.base_url`` should be (OpenAI wire:
  ``http://127.0.0.1:PORT/v1``; Anthropic and Gemini: ``http://127.0.0.1:PORT``).
- ``script(*replies)``: queue replies; each POST pops the next. With the queue
  empty the server answers HTTP 500 with a body saying so (or, with
  ``repeat_last``, repeats the last reply).
- ``requests``: the JSON bodies received, in order; ``received``: the full
  :class:`RecordedRequest` (method, path, lower-cased headers, body).
- ``sent``: ``(wall-clock time, bytes)`` of every streamed piece as it left
  (``time.time()`` just before the write: a client cannot see a piece before
  its stamp, however the threads are scheduled), for latency measurements
  against a client's own clock.
- ``disconnects``: how many streams the client closed before their end;
  ``client_closed``: a ``threading.Event`` set on the first one.
- ``received_post``: a ``threading.Event`` set on the first POST.
- ``GET .../models`` lists ``models`` (default ``["fake-model"]``), so model
  discovery and local-server autodetection work against it.
- ``context_window=N`` makes it a model with a window of N tokens (a token
  is :data:`TOKEN_BYTES` bytes of the request body): a longer request is
  answered with the wire's own "prompt is too long" HTTP 400 (counted in
  ``too_long``) and pops no reply; every reply reports the request's tokens
  as its prompt usage. With ``report_window`` it also answers llama.cpp's
  ``GET /props`` with ``n_ctx``, as a local server does.
- FIM: ``POST .../completions`` and Ollama's ``/api/generate`` answer the
  next reply's text whole, in the route's shape (:mod:`tests.fakes.fim`);
  ``fim=False`` answers them 404, as a chat-only server does.
- ``responder``: called with the request's JSON body when the script is
  empty, returns the reply (a model that answers whatever it is asked).
- ``hold=N`` on a reply stops its stream after N pieces until the test calls
  ``release()`` (or a test body in an editor GETs ``/release``); ``holding``
  is set while it waits. A test paces the model by the events it awaits,
  not by delays.

Reply builders (re-exported from :mod:`tests.fakes.wire`): ``text_reply``,
``tool_reply``, ``error_reply``, ``raw_reply``, ``stream_error_reply``,
``drip_reply`` (a stream that sends one byte every few seconds, forever).

As a process (benchmarks, non-Python clients)::

    python -m tests.fakes.model_server --wire openai --port 0 --script replies.json

prints its base URL as the first line of stdout, then serves until killed.
The script file is a JSON list of replies (``Reply.to_json`` dicts; only
``kind`` is required).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from tests.fakes.model_http import TOKEN_BYTES, RecordedRequest, Server
from tests.fakes.wire import (
    Reply,
    Wire,
    drip_reply,
    error_reply,
    raw_reply,
    render,
    stream_error_reply,
    text_reply,
    too_long_reply,
    tool_reply,
)

__all__ = [
    "TOKEN_BYTES",
    "FakeModelServer",
    "RecordedRequest",
    "Reply",
    "drip_reply",
    "error_reply",
    "raw_reply",
    "stream_error_reply",
    "text_reply",
    "too_long_reply",
    "tool_reply",
]


class FakeModelServer:
    """A real HTTP model server on 127.0.0.1 replaying scripted replies.

    Parameters
    ----------
    wire
        The wire format it speaks.
    port
        The port to bind (``0``: a free one).
    repeat_last
        Serve the last scripted reply again once the queue is empty.
    models
        The ids ``GET .../models`` lists.
    owned_by
        The ``owned_by`` of each listed model (vLLM says ``vllm``).
    context_window, report_window, responder
        See the module docstring.
    """

    def __init__(
        self,
        wire: Wire = "openai",
        *,
        port: int = 0,
        repeat_last: bool = False,
        models: list[str] | None = None,
        owned_by: str = "fake",
        context_window: int | None = None,
        report_window: bool = False,
        responder: Callable[[Any], Reply] | None = None,
        fim: bool = True,
    ) -> None:
        self.fim = fim
        self.wire: Wire = wire
        self.owned_by = owned_by
        self.context_window = context_window
        self.report_window = report_window
        self.responder = responder
        self.too_long = 0
        self.port = port
        self.repeat_last = repeat_last
        self.models = list(models) if models is not None else ["fake-model"]
        self.received: list[RecordedRequest] = []
        self.disconnects = 0
        self.sent: list[tuple[float, bytes]] = []
        self.client_closed = threading.Event()
        self.received_post = threading.Event()
        self.holding = threading.Event()
        """Set while an answer waits at its ``hold`` for :meth:`release`."""
        self._releases = threading.Semaphore(0)
        self._queue: list[Reply] = []
        self._last: Reply | None = None
        self._cache: dict[int, tuple[Reply, tuple[int, dict[str, str], list[bytes]]]] = {}
        self._lock = threading.Lock()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> FakeModelServer:
        """Bind and serve from a background thread."""
        self._server = Server(self, self.port)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------------

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The ``baseUrl`` for this wire."""
        return f"{self.origin}/v1" if self.wire == "openai" else self.origin

    # -- scripting and recording ----------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue ``replies``; each request pops the next."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def requests(self) -> list[Any]:
        """The JSON bodies of the POST requests received, in order."""
        with self._lock:
            return [request.body for request in self.received if request.method == "POST"]

    @property
    def posts(self) -> list[RecordedRequest]:
        """The POST requests received, in order (headers included)."""
        with self._lock:
            return [request for request in self.received if request.method == "POST"]

    @property
    def pending(self) -> int:
        """How many scripted replies are still queued."""
        with self._lock:
            return len(self._queue)

    def release(self) -> None:
        """Let one held answer (:attr:`Reply.hold`) go on; one given before
        the answer reaches its hold lets it pass at once."""
        self._releases.release()

    def _wait_for_release(self) -> None:
        self.holding.set()
        try:
            self._releases.acquire(timeout=60)
        finally:
            self.holding.clear()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.received.append(request)
        if request.method == "POST":
            self.received_post.set()

    def _next_reply(self, body: bytes = b"") -> Reply | None:
        with self._lock:
            if self._queue:
                self._last = self._queue.pop(0)
                return self._last
            if self.responder is None:
                return self._last if self.repeat_last else None
        return self.responder(json.loads(body) if body else None)

    def _too_long(self) -> None:
        with self._lock:
            self.too_long += 1

    def _rendered(self, reply: Reply) -> tuple[int, dict[str, str], list[bytes]]:
        # Keyed by id() but holding the reply itself: a reply that was freed
        # could hand its id to a new one, which must not get the old bytes.
        key = id(reply)
        with self._lock:
            cached = self._cache.get(key)
        if cached is None or cached[0] is not reply:
            cached = (reply, render(reply, self.wire))
            with self._lock:
                self._cache[key] = cached
        return cached[1]

    def _disconnected(self) -> None:
        with self._lock:
            self.disconnects += 1
        self.client_closed.set()


def main(argv: list[str] | None = None) -> None:
    """Serve a scripted fake from the command line; print the base URL first."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--wire", choices=["openai", "anthropic", "gemini"], default="openai")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file: a list of replies")
    parser.add_argument("--repeat", action="store_true", help="repeat the last reply forever")
    args = parser.parse_args(argv)
    server = FakeModelServer(wire=args.wire, port=args.port, repeat_last=args.repeat)
    if args.script:
        with open(args.script, encoding="utf-8") as handle:
            server.script(*(Reply.from_json(item) for item in json.load(handle)))
    server.start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    sys.exit(0)


if __name__ == "__main__":
    main()
