"""A loopback HTTP server that plays canned responses and records the requests it got.

Vendor SDKs are pointed at it with `base_url`, so replay tests run the real SDK and real HTTP on
127.0.0.1 and nothing else.

Replies are played in order, one per request, except for `routes` ("GET /v1/models" -> a reply
given every time) and model lists nobody routed: an ACP session asks its OpenAI-compatible
server for `GET .../models` in the background (`earshot.model_lists`), which must not take a
reply queued for the model; such a request gets a 404 (it is still recorded).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One canned response. `body` is written as-is (SSE bytes for streams)."""

    body: bytes | str = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    chunks: Sequence[bytes] | None = None
    """Write the body in these pieces (chunked transfer) instead of all at once."""
    stall: bool = False
    """With `chunks`: after the last piece, send nothing more (no end of the body) until the
    client gives up and closes the connection: a stream that went silent."""

    @classmethod
    def json(cls, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
        return cls(
            body=json.dumps(data).encode(),
            status=status,
            headers={"content-type": "application/json", **(headers or {})},
        )


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class LoopbackServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.routes: dict[str, Reply] = {}
        """"METHOD /path" -> the reply to every such request (the queue is left alone)."""
        self.requests: list[Recorded] = []
        self.responder: Callable[[Recorded], Reply] | None = None
        """Answers every request from what it holds, instead of `replies` (a model that checks
        what it is sent)."""
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                with server._lock:
                    recorded = Recorded(
                        self.command,
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                    )
                    server.requests.append(recorded)
                    server._arrived.notify_all()
                    route = f"{self.command} {self.path.split('?', 1)[0]}"
                    if route in server.routes:
                        reply = server.routes[route]
                    elif self.command == "GET" and route.endswith("/models"):
                        reply = Reply.json({"error": {"message": "not routed"}}, status=404)
                    elif server.responder is not None:
                        reply = server.responder(recorded)
                    elif server.replies:
                        reply = server.replies.pop(0)
                    else:
                        reply = Reply.json(
                            {"error": {"message": "loopback: no reply queued", "type": "test"}},
                            status=599,
                        )
                payload = reply.body.encode() if isinstance(reply.body, str) else reply.body
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if reply.chunks is not None:
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    for piece in reply.chunks:
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                        self.wfile.flush()
                    if reply.stall:
                        while self.rfile.read(1):  # until the client closes the connection
                            pass
                        self.close_connection = True
                        return
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                self.wfile.flush()

            do_GET = _handle
            do_POST = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def model_calls(self) -> list[Recorded]:
        """The POST requests: model calls (a session may also GET the model list in the
        background)."""
        return [request for request in self.requests if request.method == "POST"]

    def wait_until(self, predicate: Callable[[list[Recorded]], bool], timeout: float) -> bool:
        """Block until `predicate(requests)` holds (checked at each request), at most `timeout`
        seconds; whether it held. Call it from a worker thread in async tests."""
        with self._arrived:
            return self._arrived.wait_for(lambda: predicate(self.requests), timeout)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def loopback(*replies: Reply) -> Generator[LoopbackServer]:
    server = LoopbackServer()
    server.replies.extend(replies)
    server.start()
    try:
        yield server
    finally:
        server.stop()
