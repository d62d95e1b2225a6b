"""The sandbox's proxy on its own (`agent.sandbox.proxy`), on a listener of the test's: what it
forwards and how, the user's own proxy after it, and the refusals it records with the network
off. Real sockets on loopback; the sandbox itself is `test_sandbox_network`'s."""

from __future__ import annotations

import base64
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from agent.sandbox.proxy import PROXY_USER, EgressProxy, upstream_proxies

TIMEOUT = 30.0


def listener() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    return server


@dataclass
class Origin:
    """A server that records the first request head it gets and answers with `reply`."""

    reply: bytes
    socket: socket.socket = field(default_factory=listener)
    heads: list[bytes] = field(default_factory=lambda: [])
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def port(self) -> int:
        return self.socket.getsockname()[1]

    def serve_one(self) -> None:
        connection, _ = self.socket.accept()
        with connection:
            connection.settimeout(TIMEOUT)
            head = b""
            while b"\r\n\r\n" not in head:
                head += connection.recv(4096)
            self.heads.append(head)
            connection.sendall(self.reply)
        self.done.set()


@pytest.fixture
def origin() -> Iterator[Origin]:
    served = Origin(reply=b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello")
    thread = threading.Thread(target=served.serve_one, daemon=True)
    thread.start()
    yield served
    served.socket.close()


def proxy(*, egress: bool = True, environ: dict[str, str] | None = None) -> int:
    server = listener()
    EgressProxy(server, egress=egress, environ=environ or {}).start()
    return server.getsockname()[1]


def exchange(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as client:
        client.sendall(request)
        answer = b""
        while chunk := client.recv(4096):
            answer += chunk
        return answer


def test_a_request_is_forwarded_in_origin_form_and_closed(origin: Origin) -> None:
    request = (
        f"GET http://127.0.0.1:{origin.port}/a?b=c HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Proxy-Authorization: Basic eDp5\r\nProxy-Connection: keep-alive\r\n\r\n"
    ).encode()
    answer = exchange(proxy(), request)
    assert answer.endswith(b"hello")
    assert origin.done.wait(TIMEOUT)
    head = origin.heads[0].decode()
    assert head.startswith("GET /a?b=c HTTP/1.1\r\n")
    assert "Connection: close" in head
    assert "Proxy-" not in head


def test_a_tunnel_goes_through_the_users_own_proxy(origin: Origin) -> None:
    # The "origin" plays the user's proxy: it gets the CONNECT, with the user's credentials.
    origin.reply = b"HTTP/1.1 200 Connection established\r\n\r\nfrom the far end"
    environ = {"https_proxy": f"http://me:secret@127.0.0.1:{origin.port}", "no_proxy": "skip.test"}
    answer = exchange(proxy(environ=environ), b"CONNECT example.test:443 HTTP/1.1\r\n\r\n")
    assert answer == b"HTTP/1.1 200 Connection established\r\n\r\nfrom the far end"
    head = origin.heads[0].decode()
    assert head.startswith("CONNECT example.test:443 HTTP/1.1\r\n")
    assert f"Proxy-Authorization: Basic {base64.b64encode(b'me:secret').decode()}" in head


def test_loopback_and_no_proxy_hosts_go_direct(origin: Origin) -> None:
    environ = {"http_proxy": "http://127.0.0.1:9", "no_proxy": "skip.test"}
    answer = exchange(
        proxy(environ=environ), f"GET http://127.0.0.1:{origin.port}/ HTTP/1.1\r\n\r\n".encode()
    )
    assert answer.endswith(b"hello")  # not sent to the unreachable proxy at port 9


def test_with_the_network_off_it_refuses_and_remembers_who_asked() -> None:
    server = listener()
    refusing = EgressProxy(server, egress=False, environ={})
    refusing.start()
    token = base64.b64encode(f"{PROXY_USER}:launch-1".encode()).decode()
    request = f"CONNECT example.test:443 HTTP/1.1\r\nProxy-Authorization: Basic {token}\r\n\r\n"
    answer = exchange(server.getsockname()[1], request.encode())
    assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"network is off" in answer
    assert refusing.refused("launch-1") == ("example.test:443",)
    assert refusing.refused("launch-1") == ()  # read once


def test_the_users_proxy_settings_are_read_as_urllib_reads_them() -> None:
    environ = {
        "HTTPS_PROXY": "http://upper:3128",
        "https_proxy": "http://lower:3128",
        "HTTP_PROXY": "http://cgi:3128",
        "REQUEST_METHOD": "GET",
        "NO_PROXY": "internal.example",
    }
    assert upstream_proxies(environ) == {"https": "http://lower:3128", "no": "internal.example"}
