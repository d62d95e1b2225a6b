"""The sandbox's network, for real: commands have a network namespace of their own, shared by every
sandboxed command of the process, and reach out only through earshot's proxy.

"The host" is a loopback server the test runs (127.0.0.2: the whole of 127/8 is loopback, and
only 127.0.0.1 and localhost are the sandbox's own), so nothing leaves the machine. The clients
are the real ones: curl (a forwarded request and a CONNECT tunnel), Python's urllib, git over
http (a clone and a fetch), `pip install` from a package index."""

from __future__ import annotations

import base64
import functools
import hashlib
import shutil
import sys
import threading
import zipfile
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agent.local import BackgroundJobs
from agent.sandbox import command_sandbox as sandbox_module
from agent.sandbox import network as sandbox_network
from agent.sandbox.network import PROXY_PORT
from agent.settings import SandboxConfig
from tests.agent.sandbox_lab import Lab, git, make_lab, needs_linux

pytestmark = needs_linux
HOST = "127.0.0.2"


@pytest.fixture
def lab(monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from make_lab(monkeypatch)


class Site:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths: list[str] = []
        site = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                site.paths.append(self.path)

        handler = functools.partial(Handler, directory=str(root))
        self.server = ThreadingHTTPServer((HOST, 0), handler)
        self.url = f"http://{HOST}:{self.server.server_address[1]}"


def _wheel(directory: Path) -> None:
    """A package index (PEP 503, static) holding one small wheel, `earshot-probe` 1.0."""
    files = {
        "earshot_probe.py": b"ANSWER = 42\n",
        "earshot_probe-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: earshot-probe\n"
        b"Version: 1.0\n",
        "earshot_probe-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()] + [
        "earshot_probe-1.0.dist-info/RECORD,,"
    ]
    files["earshot_probe-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = directory / "earshot_probe-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    project = directory / "simple" / "earshot-probe"
    project.mkdir(parents=True)
    link = f'<a href="../../{wheel.name}">{wheel.name}</a>'
    (project / "index.html").write_text(f"<html><body>{link}</body></html>\n", encoding="utf-8")


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


@pytest.fixture
def site(lab: Lab) -> Iterator[Site]:
    """Static files on the host's loopback: a page, a git repository served the dumb way and a
    package index."""
    root = lab.base / "site"
    root.mkdir()
    (root / "page.txt").write_text("served by the host\n", encoding="utf-8")
    git(lab.base, "clone", "-q", "--bare", str(lab.project), str(root / "repo.git"))
    git(root / "repo.git", "update-server-info")
    _wheel(root)
    served = Site(root)
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()


def urllib_get(url: str) -> str:
    return f"python3 -c \"import urllib.request as u; print(u.urlopen('{url}').read().decode())\""


def direct_connect(host: str, port: int) -> str:
    return (
        f"python3 -c \"import socket; socket.create_connection(('{host}', {port}), timeout=5)\" "
        "2>/dev/null || echo unreachable"
    )


async def test_commands_reach_the_host_through_the_proxy_only(lab: Lab, site: Site) -> None:
    if shutil.which("curl") is None:
        pytest.fail("curl is not installed")
    sandbox = await lab.sandbox()
    port = site.server.server_address[1]
    script = " && ".join(
        [
            f"curl -sSf --max-time 20 {site.url}/page.txt",  # forwarded
            f"curl -sSf --max-time 20 --proxytunnel {site.url}/page.txt",  # CONNECT
            urllib_get(f"{site.url}/page.txt"),
            f"git clone -q {site.url}/repo.git clone",
            "git -C clone fetch -q origin",
            "git -C clone log --oneline | wc -l",
            f"{sys.executable} -m pip install -q --no-cache-dir --disable-pip-version-check "
            f"--no-deps --target pkgs --index-url {site.url}/simple earshot-probe",
            direct_connect("127.0.0.1", port),  # the host's loopback is not the command's
            "echo $HTTPS_PROXY",
        ]
    )
    result = await lab.run(script, sandbox)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:-1] == [
        "served by the host",
        "served by the host",
        "served by the host",
        "",
        "1",
        "unreachable",
    ]
    assert lines[-1] == f"http://127.0.0.1:{PROXY_PORT}"
    assert (lab.project / "pkgs" / "earshot_probe.py").read_text(encoding="utf-8") == (
        "ANSWER = 42\n"
    )
    assert (lab.project / "clone" / "README.md").read_text(encoding="utf-8") == "hello\n"
    assert site.paths.count("/page.txt") == 3


@pytest.mark.parametrize("network", [True, False])
async def test_a_background_server_answers_the_next_command(lab: Lab, network: bool) -> None:
    sandbox = await lab.sandbox(SandboxConfig(network=network))
    jobs = BackgroundJobs(lab.project)
    server = (
        "python3 -c \"import http.server as h; s = h.HTTPServer(('127.0.0.1', 0), "
        'h.SimpleHTTPRequestHandler); print(s.server_address[1], flush=True); s.serve_forever()"'
    )
    try:
        await jobs.start(server, confine=sandbox)
        first = await jobs.read("bg1", wait=30)
        port = int(first.text.split()[0])
        result = await lab.run(
            f"curl -sSf --max-time 20 http://127.0.0.1:{port}/README.md", sandbox
        )
        assert result.output == "hello\n", result.output
    finally:
        await jobs.aclose()


async def test_with_the_network_off_the_proxy_refuses_and_the_sandbox_sees_it(
    lab: Lab, site: Site
) -> None:
    sandbox = await lab.sandbox(SandboxConfig(network=False))
    result = await lab.run(f"curl -sSf --max-time 20 {site.url}/page.txt", sandbox)
    assert result.exit_code != 0
    assert "403" in result.output
    why = sandbox.stopped(result.output, result.exit_code)
    assert why is not None and f"{site.url}/page.txt" in why and "network" in why
    assert site.paths == []
    # A message says nothing: what the output claims about the network is not evidence...
    fake = "echo 'curl: (6) Could not resolve host: example.com'; exit 6"
    faked = await lab.run(fake, sandbox)
    assert sandbox.stopped(faked.output, faked.exit_code) is None
    # ...but a refused write leaves nothing the sandbox can see, so its message still counts
    # (agent.sandbox.command_sandbox.stopped_by_policy says why).
    erofs = await lab.run("echo 'touch: cannot touch x: Read-only file system'; exit 1", sandbox)
    assert sandbox.stopped(erofs.output, erofs.exit_code) is not None


async def test_without_a_shared_namespace_commands_run_and_the_session_says_so(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_network, "_networks", {})
    monkeypatch.setattr(sandbox_module, "_probes", {})
    monkeypatch.setattr(sandbox_network, "NSENTER", "earshot-test-no-such-nsenter")
    sandbox = await lab.sandbox()
    notice = sandbox.notice()
    assert notice is not None
    assert "nsenter (util-linux) is not installed" in notice
    assert "abstract unix sockets" in notice
    result = await lab.run("echo ran", sandbox)
    assert result.output == "ran\n"
    cut = await lab.sandbox(SandboxConfig(network=False))
    assert cut.notice() is None  # a namespace per command: nothing of the host's is reachable
    assert (await lab.run("echo ran", cut)).output == "ran\n"
