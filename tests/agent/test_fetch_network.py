"""Fetch and the local network (issue 12, item 5): loopback, private and link-local addresses
ask, names resolving to them ask, a redirect to another host or port is checked like a new
request, and the connection goes only to the addresses checked. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

from agent.backends import (
    Mode,
    PermissionAnswer,
    PermissionOptionKind,
    PermissionPrompt,
    Question,
    QuestionAnswer,
)
from agent.network import local_address, local_host
from agent.permissions import PermissionRules, decide
from agent.tools import PermissionRequest
from agent.tools.fetch import fetch_tool
from agent.tools.fetch_guard import FetchGuard, FetchRefused
from providers.wire.scripted import ScriptedCall, ScriptedTurn
from tests.agent.loop_support import collect, env, make_session, results_of
from tests.agent.tools_harness import harness
from tests.loopback import LoopbackServer, Reply, loopback

TEXT = {"content-type": "text/plain"}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with loopback() as running:
        yield running


@dataclass
class Answers:
    """Answers permission prompts in order; records them."""

    kinds: list[PermissionOptionKind]
    prompts: list[PermissionPrompt] = field(default_factory=lambda: [])

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        self.prompts.append(prompt)
        kind = self.kinds.pop(0)
        return PermissionAnswer(option_id=next(o.id for o in prompt.options if o.kind == kind))

    async def ask_question(self, question: Question) -> QuestionAnswer:
        return QuestionAnswer(declined=True)


async def fetch_in_session(
    tmp_path: Path, url: str, answers: Sequence[PermissionOptionKind], mode: Mode = "auto"
) -> tuple[str, Answers]:
    """One `fetch` call made by the scripted model in a real session; the result text."""
    user = Answers(list(answers))
    turns = [
        ScriptedTurn(tool_calls=[ScriptedCall(name="fetch", arguments={"url": url}, id="f")]),
        ScriptedTurn(text="done"),
    ]
    session = await make_session(env(tmp_path), turns, builtin=True, interaction=user, mode=mode)
    try:
        await collect(session.run_turn("fetch it"))
        result = results_of(session.transcript.stored.history())["f"]
    finally:
        await session.aclose()
    assert user.kinds == [], "a prompt the test expected was not asked"
    return result.text, user


# ------------------------------------------------------------------------------ the policy


LOCAL_URLS = [
    "http://127.0.0.1:8080/",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://localhost:6379/",
    "http://api.localhost/",
    "http://[::1]:9000/",
    "http://[::ffff:127.0.0.1]/",
    "http://169.254.169.254/latest/meta-data/iam/",
    "http://10.0.0.5/",
    "http://192.168.1.1/admin",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://0.0.0.0:8000/",
]


@pytest.mark.parametrize("url", LOCAL_URLS)
@pytest.mark.parametrize("mode", ["ask", "accept-edits", "auto"])
def test_a_local_address_asks_whatever_the_mode_and_broad_rules(url: str, mode: Mode) -> None:
    h = harness(Path("/tmp"))
    request = h.permission(fetch_tool, url=url)
    assert request.local_network
    rules = PermissionRules.parse(allow=("Fetch", "Fetch(domain:*.localhost)"))
    decision = decide(rules, mode, request, read_only=False, roots=[Path("/work/project")])
    assert (decision.outcome, decision.step, decision.grantable) == ("ask", 4, True)


def test_yolo_and_an_exact_rule_allow_a_local_address() -> None:
    request = harness(Path("/tmp")).permission(fetch_tool, url="http://localhost:3000/")
    roots = [Path("/work/project")]
    assert decide(PermissionRules(), "yolo", request, read_only=False, roots=roots).outcome == (
        "allow"
    )
    exact = PermissionRules.parse(allow=("Fetch(domain:localhost)",))
    assert decide(exact, "ask", request, read_only=False, roots=roots).outcome == "allow"
    denied = PermissionRules.parse(allow=("Fetch(domain:localhost)",), deny=("Fetch",))
    assert decide(denied, "yolo", request, read_only=False, roots=roots).outcome == "deny"


def test_public_hosts_are_not_local() -> None:
    for host in ("example.com", "8.8.8.8", "2606:4700::1111", "localhost.example.com"):
        assert not local_host(host), host


# ------------------------------------------------------------------------------ the tool


async def test_fetching_loopback_in_auto_mode_asks_first(
    tmp_path: Path, server: LoopbackServer
) -> None:
    server.replies[:] = [Reply(body="internal", headers=TEXT)]
    text, user = await fetch_in_session(tmp_path, f"{server.url}/admin", ["reject_once"])
    assert server.requests == []
    assert "Permission denied" in text
    assert "local network address" in user.prompts[0].reason
    kinds = {option.kind for option in user.prompts[0].options}
    assert "allow_always" in kinds  # an exact Fetch(domain:127.0.0.1) rule may be remembered


async def test_allowed_once_the_loopback_fetch_runs(tmp_path: Path, server: LoopbackServer) -> None:
    server.replies[:] = [Reply(body="internal", headers=TEXT)]
    text, _ = await fetch_in_session(tmp_path, f"{server.url}/admin", ["allow_once"])
    assert text.endswith("internal") and len(server.requests) == 1


async def test_a_redirect_to_another_port_is_asked_like_a_new_request(tmp_path: Path) -> None:
    with loopback() as first, loopback() as second:
        second.replies[:] = [Reply(body="redis-ish", headers=TEXT)]
        first.replies[:] = [Reply(status=302, headers={"location": f"{second.url}/flushall"})]
        text, user = await fetch_in_session(
            tmp_path, f"{first.url}/start", ["allow_once", "reject_once"]
        )
        assert second.requests == []
        assert len(user.prompts) == 2 and "local network" in user.prompts[1].reason
        assert f"redirects (302) to another origin: {second.url}/flushall" in text
        assert "Following it was not allowed" in text


async def test_an_allowed_redirect_to_another_port_is_followed(tmp_path: Path) -> None:
    with loopback() as first, loopback() as second:
        second.replies[:] = [Reply(body="arrived", headers=TEXT)]
        first.replies[:] = [Reply(status=307, headers={"location": f"{second.url}/x"})]
        text, _ = await fetch_in_session(
            tmp_path, f"{first.url}/start", ["allow_once", "allow_once"]
        )
        assert text.endswith("arrived") and [r.path for r in second.requests] == ["/x"]


async def test_a_name_resolving_to_loopback_asks(tmp_path: Path, server: LoopbackServer) -> None:
    name = socket.gethostname()
    addresses = {info[4][0] for info in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)}
    if local_host(name) or "127.0.0.1" not in addresses:
        pytest.skip(f"this machine's name ({name}) does not resolve to 127.0.0.1")
    server.replies[:] = [Reply(body="internal", headers=TEXT)]
    port = server.url.rsplit(":", 1)[1]
    url = f"http://{name}:{port}/admin"
    text, user = await fetch_in_session(tmp_path, url, ["reject_once"])
    assert server.requests == []
    assert f"local network address ({name.lower()}" in user.prompts[0].reason
    assert f"{name.lower()} resolves to 127.0.0.1, a local network address" in text


# ------------------------------------------------------------------------ the pinned connection


async def test_the_connection_goes_only_to_the_addresses_checked(server: LoopbackServer) -> None:
    lookups: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        lookups.append(host)
        if host == "pinned.test":
            return ["127.0.0.1"]
        raise OSError("no such host")

    server.replies[:] = [Reply(body="pinned", headers=TEXT)]
    port = int(server.url.rsplit(":", 1)[1])
    guard = FetchGuard(None, resolver)
    await guard.admit(f"http://pinned.test:{port}/", approved_local=True)
    async with guard.client(timeout=10, headers={}, proxy=None) as client:
        with anyio.fail_after(10):
            response = await client.get(f"http://pinned.test:{port}/")
            assert response.text == "pinned"
            assert server.requests[0].headers["host"] == f"pinned.test:{port}"
            import httpx2

            with pytest.raises(httpx2.ConnectError, match="was not checked"):
                await client.get(f"http://127.0.0.1:{port}/")
    assert lookups == ["pinned.test"]  # one lookup: the connection did not resolve again


async def test_a_name_resolving_locally_without_a_gate_is_refused() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "169.254.169.254"]

    guard = FetchGuard(None, resolver)
    with pytest.raises(FetchRefused, match=r"resolves to 169\.254\.169\.254"):
        await guard.admit("http://metadata.example/", approved_local=False)
    asked: list[PermissionRequest] = []

    async def recheck(request: PermissionRequest) -> bool:
        asked.append(request)
        return True

    allowing = FetchGuard(recheck, resolver)
    await allowing.admit("http://metadata.example/", approved_local=False)
    assert [(r.domain, r.local_network) for r in asked] == [("metadata.example", True)]


@pytest.mark.parametrize(
    ("address", "local"),
    [
        ("127.0.0.1", True),
        ("10.1.2.3", True),
        ("172.16.0.1", True),
        ("192.168.0.1", True),
        ("169.254.169.254", True),
        ("100.64.0.1", True),
        ("0.0.0.0", True),
        ("224.0.0.1", True),
        ("::1", True),
        ("fd12::1", True),
        ("fe80::1%eth0", True),
        ("::ffff:10.0.0.1", True),
        ("2002:a9fe:a9fe::1", True),  # 6to4 around 169.254.169.254
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", True),  # Teredo
        ("93.184.216.34", False),
        ("2606:4700::1111", False),
        ("::ffff:8.8.8.8", False),
        ("not-an-address", False),
    ],
)
def test_resolved_addresses_are_classified(address: str, local: bool) -> None:
    assert local_address(address) is local
