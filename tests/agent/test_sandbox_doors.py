"""The sandbox's doors to the host, for real: a tmux server (on a socket of the test's and at
tmux's default `/tmp/tmux-UID/default`), an ssh agent holding a key, D-Bus session buses on a
path socket and on an abstract one, and another checkout in the host's `/tmp`.

One script tries every door. It is run twice in the sandbox (network on, network off) and must
reach none; then once without the sandbox, where it reaches every one (so the test can fail).
Effects are checked on the host: files the doors' services would write, the agent's keys, the
other checkout's `.git/config`."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.settings import SandboxConfig
from tests.agent.sandbox_lab import Lab, git, make_lab, needs_linux

pytestmark = needs_linux


@pytest.fixture
def lab(monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    yield from make_lab(monkeypatch)


@dataclass
class Doors:
    tmux: Path
    """A tmux server's socket in the lab (outside /tmp and every hidden place)."""
    tmux_default: Path | None
    """One at tmux's default path, when the test could start it there (see `_default_tmux`)."""
    agent: Path
    fingerprint: str
    bus_path: str
    bus_abstract: str
    checkout: Path
    """Another project in the host's /tmp."""
    marks: Path
    """Where the services outside write what they were made to do."""

    def script(self) -> str:
        """Every attack; each says `reached <door>` when it got through."""
        tmux_default = (
            f"tmux run-shell 'touch {self.marks}/tmux-default' && echo reached tmux-default; "
            if self.tmux_default is not None
            else ""
        )
        bus = "--print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
        bus += "org.freedesktop.DBus.GetId"
        return (
            f"tmux -S {self.tmux} run-shell 'touch {self.marks}/tmux' && echo reached tmux; "
            # $TMUX names the lab's server: without it tmux looks at its default path.
            f"tmux run-shell 'touch {self.marks}/tmux-env' && echo reached tmux-env; "
            + tmux_default
            + f"SSH_AUTH_SOCK={self.agent} ssh-add -l && echo reached agent; "
            "ssh-add -l && echo reached agent-env; "
            f"SSH_AUTH_SOCK={self.agent} ssh-add -D && echo reached agent-delete; "
            f"dbus-send --bus={self.bus_path} {bus} && echo reached bus-path; "
            f"dbus-send --bus={self.bus_abstract} {bus} && echo reached bus-abstract; "
            f"dbus-send --session {bus} && echo reached bus-env; "
            f"git -C {self.checkout} config core.fsmonitor 'touch {self.marks}/fsmonitor' "
            "&& echo reached checkout; "
            "true"
        )

    def agent_keys(self) -> str:
        done = subprocess.run(
            ["ssh-add", "-l"],
            env={**os.environ, "SSH_AUTH_SOCK": str(self.agent)},
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout


def _start(stack: contextlib.ExitStack, command: list[str]) -> str:
    """Start a service; the first line it prints (once it listens)."""
    process = stack.enter_context(
        subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True, env=os.environ
        )
    )
    stack.callback(process.terminate)
    assert process.stdout is not None
    return process.stdout.readline().strip()


@contextlib.contextmanager
def _tmux(socket: Path) -> Generator[None]:
    session = f"earshot-test-{uuid.uuid4().hex[:8]}"
    base = ["tmux", "-S", str(socket), "-f", "/dev/null"]
    subprocess.run([*base, "new-session", "-d", "-s", session], check=True)
    try:
        yield
    finally:
        # Our session only: the server ends with its last session (a server we did not start
        # would keep the others).
        subprocess.run([*base, "kill-session", "-t", session], check=False, capture_output=True)


@contextlib.contextmanager
def _default_tmux() -> Generator[Path | None]:
    """A server at /tmp/tmux-UID/default, unless one is there already (the user's own, on a
    developer's machine: never touched); then the lab's socket stands for it."""
    directory = Path(f"/tmp/tmux-{os.getuid()}")
    socket = directory / "default"
    if socket.exists():
        yield None
        return
    created = not directory.exists()
    directory.mkdir(mode=0o700, exist_ok=True)
    try:
        with _tmux(socket):
            yield socket
    finally:
        with contextlib.suppress(OSError):
            socket.unlink()
        if created:
            with contextlib.suppress(OSError):
                directory.rmdir()


@pytest.fixture
def doors(lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Doors]:
    for tool in ("tmux", "ssh-agent", "dbus-daemon", "dbus-send"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed; scripts/test installs it")
    services = lab.base / "services"
    services.mkdir()
    marks = lab.base / "marks"
    marks.mkdir()
    checkout = tmp_path / "other-project"  # the host's /tmp
    checkout.mkdir()
    git(checkout, "init", "-q")
    agent_socket = services / "agent.sock"
    key = services / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    with contextlib.ExitStack() as stack:
        _start(stack, ["ssh-agent", "-D", "-a", str(agent_socket)])
        environ = {**os.environ, "SSH_AUTH_SOCK": str(agent_socket)}
        subprocess.run(["ssh-add", "-q", str(key)], env=environ, check=True)
        fingerprint = subprocess.run(
            ["ssh-keygen", "-l", "-f", str(key)], capture_output=True, text=True, check=True
        ).stdout.split()[1]
        addresses: list[str] = []
        for address in (
            f"unix:path={services}/bus",
            f"unix:abstract=/tmp/earshot-test-{uuid.uuid4().hex}",
        ):
            daemon = ["dbus-daemon", "--session", f"--address={address}", "--nofork"]
            addresses.append(_start(stack, [*daemon, "--print-address"]))
        stack.enter_context(_tmux(services / "tmux"))
        default = stack.enter_context(_default_tmux())
        # What an editor started inside tmux, with an agent and a session bus, passes on.
        monkeypatch.setenv("TMUX", f"{services / 'tmux'},1,0")
        monkeypatch.setenv("SSH_AUTH_SOCK", str(agent_socket))
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", addresses[1])
        yield Doors(
            tmux=services / "tmux",
            tmux_default=default,
            agent=agent_socket,
            fingerprint=fingerprint,
            bus_path=addresses[0],
            bus_abstract=addresses[1],
            checkout=checkout,
            marks=marks,
        )


DOORS = {
    "tmux",
    "tmux-env",
    "agent",
    "agent-env",
    "agent-delete",
    "bus-path",
    "bus-abstract",
    "bus-env",
    "checkout",
}


def reached(output: str) -> set[str]:
    return {line.split()[1] for line in output.splitlines() if line.startswith("reached ")}


async def test_no_door_to_the_host_opens_from_the_sandbox(lab: Lab, doors: Doors) -> None:
    config = (doors.checkout / ".git" / "config").read_text(encoding="utf-8")
    for network in (True, False):
        sandbox = await lab.sandbox(SandboxConfig(network=network))
        result = await lab.run(doors.script(), sandbox)
        assert reached(result.output) == set(), result.output
        assert doors.fingerprint not in result.output
        assert sorted(os.listdir(doors.marks)) == []
        assert doors.fingerprint in doors.agent_keys()  # `ssh-add -D` emptied nothing
        assert (doors.checkout / ".git" / "config").read_text(encoding="utf-8") == config

    # Without the sandbox every door opens (the agent's keys are deleted last).
    result = await lab.run(doors.script(), None)
    expected = DOORS | ({"tmux-default"} if doors.tmux_default is not None else set[str]())
    assert reached(result.output) == expected, result.output
    assert doors.fingerprint in result.output
    assert sorted(os.listdir(doors.marks)) == sorted(
        ["tmux", "tmux-env", *(["tmux-default"] if doors.tmux_default else [])]
    )
    assert doors.fingerprint not in doors.agent_keys()
    assert "fsmonitor" in (doors.checkout / ".git" / "config").read_text(encoding="utf-8")


async def test_the_variables_that_name_doors_are_gone(lab: Lab, doors: Doors) -> None:
    sandbox = await lab.sandbox()
    result = await lab.run(
        "echo [$TMUX][$SSH_AUTH_SOCK][$DBUS_SESSION_BUS_ADDRESS][$XDG_RUNTIME_DIR]", sandbox
    )
    assert result.output == "[][][][]\n"
