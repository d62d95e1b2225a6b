"""Fetch behind an HTTP proxy (issue 24, item 6): the proxy resolves names (earshot resolves
nothing, so a network where only the proxy can resolve names still fetches), what the URL alone
says is local (IP literals, `localhost`, metadata and private-suffix names, dotless names) asks
first, and a redirect to another origin is a new fetch. A loopback server plays the proxy: it
answers requests in proxy form (`GET http://host/path`) for names that resolve nowhere."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent.network import local_host
from agent.tools.fetch_guard import proxy_for, same_origin
from tests.agent.test_fetch_network import TEXT, fetch_in_session
from tests.loopback import LoopbackServer, Recorded, Reply, loopback

NOWHERE = "http://docs.example.invalid"
"""A name no resolver knows (`.invalid`): only the proxy 'resolves' it."""


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackServer]:
    with loopback() as server:
        for name in ("http_proxy", "HTTP_PROXY"):
            monkeypatch.setenv(name, server.url)
        for name in ("no_proxy", "NO_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        yield server


def _answer(routes: dict[str, Reply]) -> Callable[[Recorded], Reply]:
    def respond(request: Recorded) -> Reply:
        return routes.get(request.path, Reply(status=404, body="not here", headers=TEXT))

    return respond


async def test_the_proxy_resolves_the_name(tmp_path: Path, proxy: LoopbackServer) -> None:
    proxy.responder = _answer({f"{NOWHERE}/page": Reply(body="via the proxy", headers=TEXT)})
    assert proxy_for(f"{NOWHERE}/page") == proxy.url
    text, user = await fetch_in_session(tmp_path, f"{NOWHERE}/page", [])
    assert text.endswith("via the proxy"), text
    assert [request.path for request in proxy.requests] == [f"{NOWHERE}/page"]
    assert user.prompts == []


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379/",
        "http://localhost:8080/admin",
        "http://169.254.169.254/latest/meta-data/iam/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://db.internal/",
        "http://printer.local/",
        "http://router/",
    ],
)
async def test_what_the_url_says_is_local_asks_before_the_proxy_is_used(
    tmp_path: Path, proxy: LoopbackServer, url: str
) -> None:
    text, user = await fetch_in_session(tmp_path, url, ["reject_once"])
    assert proxy.requests == []
    [prompt] = user.prompts
    assert "local network" in prompt.reason, prompt.reason
    assert "Permission denied" in text


async def test_a_redirect_to_another_origin_through_the_proxy_is_asked_again(
    tmp_path: Path, proxy: LoopbackServer
) -> None:
    elsewhere = "http://docs.example.invalid:8080/x"
    proxy.responder = _answer(
        {
            f"{NOWHERE}/start": Reply(status=302, headers={"location": elsewhere}),
            f"{NOWHERE}/meta": Reply(status=302, headers={"location": "http://169.254.169.254/"}),
            elsewhere: Reply(body="arrived", headers=TEXT),
        }
    )
    # ask mode: the first fetch was asked, so the new origin is asked again (and refused)
    text, user = await fetch_in_session(
        tmp_path, f"{NOWHERE}/start", ["allow_once", "reject_once"], mode="ask"
    )
    assert len(user.prompts) == 2 and elsewhere in text
    assert [request.path for request in proxy.requests] == [f"{NOWHERE}/start"]
    # auto: a public origin is allowed again unasked, a local one asks
    text, user = await fetch_in_session(tmp_path / "again", f"{NOWHERE}/start", [], mode="auto")
    assert text.endswith("arrived")
    text, user = await fetch_in_session(tmp_path / "meta", f"{NOWHERE}/meta", ["reject_once"])
    assert "local network" in user.prompts[0].reason
    assert not any("169.254" in request.path for request in proxy.requests)


async def test_no_proxy_hosts_connect_directly_and_are_resolved(
    tmp_path: Path, proxy: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("no_proxy", "docs.example.invalid")
    monkeypatch.setenv("NO_PROXY", "docs.example.invalid")
    assert proxy_for(f"{NOWHERE}/page") is None
    text, _ = await fetch_in_session(tmp_path, f"{NOWHERE}/page", [])
    assert "cannot resolve docs.example.invalid" in text
    assert proxy.requests == []


def test_an_http_all_proxy_is_used_a_socks_one_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("all_proxy", "http://127.0.0.1:3128")
    assert proxy_for("https://example.com/") == "http://127.0.0.1:3128"
    monkeypatch.setenv("all_proxy", "socks5://127.0.0.1:1080")
    assert proxy_for("https://example.com/") is None


def test_origins_and_local_names() -> None:
    assert same_origin("http://a.test/x", "http://a.test:80/y")
    assert not same_origin("http://a.test/x", "https://a.test/x")  # an upgrade is a new fetch
    assert not same_origin("https://a.test/x", "https://a.test:8443/x")
    assert not same_origin("https://a.test/x", "https://b.test/x")
    for host in ("metadata.google.internal", "x.localhost", "nas.home.arpa", "intranet"):
        assert local_host(host), host
    for host in ("example.com", "docs.example.invalid", "134744072"):  # 134744072 is 8.8.8.8
        assert not local_host(host), host
