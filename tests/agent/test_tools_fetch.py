from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent.tools import ToolError
from agent.tools import fetch as fetch_module
from agent.tools.fetch import fetch_tool
from tests.agent.tools_harness import Harness, harness, text_of
from tests.loopback import LoopbackServer, Reply, loopback

HTML = """<!doctype html><html><head><title>T</title><style>p{}</style></head>
<body><h1>Heading</h1><p>Some <b>bold</b> text and a <a href="/x">link</a>.</p>
<ul><li>one</li><li>two</li></ul><script>var hidden = 1;</script></body></html>"""


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return harness(tmp_path)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LoopbackServer]:
    # One server for the module: each shutdown costs half a second of polling.
    with loopback() as server:
        yield server


@pytest.fixture
def serve(shared_server: LoopbackServer) -> Callable[..., LoopbackServer]:
    def queue(*replies: Reply) -> LoopbackServer:
        shared_server.replies[:] = replies
        shared_server.requests.clear()
        return shared_server

    return queue


async def test_html_becomes_markdown(h: Harness, serve: Callable[..., LoopbackServer]) -> None:
    server = serve(Reply(body=HTML, headers={"content-type": "text/html; charset=utf-8"}))
    output = await h.run(fetch_tool, url=f"{server.url}/page")
    text = text_of(output)
    assert not output.is_error
    assert "# Heading" in text
    assert "Some **bold** text and a [link](/x)." in text
    assert "* one" in text
    assert "hidden" not in text and "<p>" not in text
    assert server.requests[0].path == "/page"
    assert "earshot" in server.requests[0].headers["user-agent"]


async def test_json_and_plain_text(h: Harness, serve: Callable[..., LoopbackServer]) -> None:
    server = serve(
        Reply.json({"a": [1, 2]}), Reply(body="plain\n", headers={"content-type": "text/plain"})
    )
    json_text = text_of(await h.run(fetch_tool, url=f"{server.url}/j"))
    plain_text = text_of(await h.run(fetch_tool, url=f"{server.url}/t"))
    assert '{\n  "a": [\n    1,\n    2\n  ]\n}' in json_text
    assert plain_text.endswith("\n\nplain\n")


async def test_http_errors_are_error_results(
    h: Harness, serve: Callable[..., LoopbackServer]
) -> None:
    server = serve(Reply(body="gone", status=404, headers={"content-type": "text/plain"}))
    output = await h.run(fetch_tool, url=f"{server.url}/missing")
    assert output.is_error
    assert text_of(output).startswith(f"HTTP error 404 fetching {server.url}/missing")


async def test_binary_content_is_refused(h: Harness, serve: Callable[..., LoopbackServer]) -> None:
    server = serve(Reply(body=b"\x89PNG....", headers={"content-type": "image/png"}))
    with pytest.raises(ToolError, match="image/png"):
        await h.run(fetch_tool, url=f"{server.url}/i.png")


async def test_same_host_redirects_are_followed_others_reported(
    h: Harness, serve: Callable[..., LoopbackServer]
) -> None:
    server = serve(
        Reply(status=302, headers={"location": "/final", "content-type": "text/plain"}),
        Reply(body="arrived", headers={"content-type": "text/plain"}),
        Reply(status=301, headers={"location": "http://localhost:1/elsewhere"}),
    )
    followed = text_of(await h.run(fetch_tool, url=f"{server.url}/start"))
    reported = text_of(await h.run(fetch_tool, url=f"{server.url}/away"))
    assert followed.startswith(f"{server.url}/final\nHTTP 200 text/plain")
    assert followed.endswith("arrived")
    assert "redirects (301) to another origin: http://localhost:1/elsewhere" in reported
    assert [r.path for r in server.requests] == ["/start", "/final", "/away"]


async def test_size_and_text_caps(
    h: Harness, serve: Callable[..., LoopbackServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fetch_module, "MAX_BYTES", 1000)
    server = serve(
        Reply(body="x" * 5000, headers={"content-type": "text/plain"}),
        Reply(body="y" * 500, headers={"content-type": "text/plain"}),
    )
    big = text_of(await h.run(fetch_tool, url=f"{server.url}/big"))
    long = text_of(await h.run(fetch_tool, url=f"{server.url}/long", max_chars=100))
    assert big.split("\n\n")[1] == "x" * 1000 and "[Body cut at 1000 bytes.]" in big
    assert long.split("\n\n")[1] == "y" * 100 and "[Text cut at 100 of 500 characters.]" in long


async def test_only_http_urls_and_connection_errors(h: Harness) -> None:
    with pytest.raises(ToolError, match="Only http and https"):
        await h.run(fetch_tool, url="file:///etc/passwd")
    with pytest.raises(ToolError, match="no host"):
        await h.run(fetch_tool, url="http:///path")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens once the socket is closed
    with pytest.raises(ToolError, match="failed"):
        await h.run(fetch_tool, url=f"http://127.0.0.1:{port}/")


async def test_permission_names_the_domain(h: Harness) -> None:
    request = h.permission(fetch_tool, url="https://Docs.Example.com:8443/a?b=1")
    assert request.rule_tool == "Fetch"
    assert request.domain == "docs.example.com"
    assert h.ui(fetch_tool, url="https://example.com").kind == "fetch"
    assert not fetch_tool.read_only
