"""The network namespace sandboxed commands share (Linux), and how a command enters it.

Why a network namespace, and not a seccomp filter: abstract unix sockets (`@/tmp/dbus-...`, X11's
`@/tmp/.X11-unix/X0`, many desktop services) belong to the network namespace, so a command in a
namespace of its own cannot reach the host's whatever it tries. A seccomp filter could only forbid
unix sockets altogether (it cannot read the address a `connect` names), and commands need their
own: Python's `multiprocessing` (its default on Linux from 3.14, `forkserver`, listens on one), a
PostgreSQL a test suite starts in `/tmp`, watchman, Chrome's singleton lock. The namespace also
leaves the host's loopback services (a database, a browser's debugging port) out of direct
reach. The cost is egress: the namespace has only a loopback interface, so earshot runs a proxy
on the host side (`agent.sandbox.proxy`) and sets `HTTP_PROXY` and friends for the command.

Why one namespace for every sandboxed command of the process, and not one per command (bwrap's
`--unshare-net`): a dev server started with `background: true` must answer the next command's
`curl localhost:3000`, and a namespace per command would put the two on different loopbacks.

How, without a process of ours inside to bridge (Claude Code's runtime runs `socat` in each
sandbox; a Python bridge would cost its start-up, ~15 ms, on every call):

1. once per process and setting (network on, network off), `bwrap --unshare-user --unshare-net`
   starts the holder (`agent.sandbox.holder`), which opens a TCP listener on the namespace's
   loopback and hands it to earshot over a socket pair, with its pid;
2. earshot's proxy accepts on that listener, in the host's namespace: the commands' connections
   arrive there directly;
3. every sandboxed command runs as `nsenter --user=/proc/PID/ns/user --net=/proc/PID/ns/net
   --preserve-credentials -- bwrap ...` (util-linux; under a millisecond), and bwrap then makes
   its own user, mount, pid and IPC namespaces inside those. The command holds no capability in
   the holder's namespaces, so it cannot change the network it was given.

The holder ends when earshot does, however it ends: it waits for end of file on the socket
pair. It stays earshot's child and is never reaped while in use, so its pid cannot be reused by
another process while a command line names it; a holder that died is replaced, and a command
line naming a dead holder fails (`nsenter` cannot open the namespaces of a zombie).

Where this cannot be had (no `nsenter`, no network namespaces), commands get the network they
had before: the host's with the network on (then the host's abstract sockets stay reachable, and
the session says so: `missing_defence`), none with it off (`--unshare-net` per command).
"""

from __future__ import annotations

import array
import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from agent.sandbox.proxy import PROXY_USER, EgressProxy

HOLDER = Path(__file__).with_name("holder.py")
NSENTER = "nsenter"
"""util-linux's, from the PATH (Debian, Fedora, Arch, Alpine: in the base system)."""
HOLDER_SECONDS = 10.0
"""How long the holder gets to report (a loaded machine: it is a Python start)."""
PROXY_PORT = 3128
"""The proxy's port on the namespace's loopback (the namespace is new, so it is free): fixed, so
that tools which read no `HTTP_PROXY` can be told once (Maven's `settings.xml`, Gradle's
`systemProp.https.proxyHost=127.0.0.1` and `proxyPort=3128`)."""
LOOPBACK_NAMES = "localhost,127.0.0.1,::1"
"""What commands reach without the proxy: their own namespace's loopback."""


@dataclass(slots=True)
class SharedNetwork:
    """The namespace, its holder and its proxy."""

    nsenter: str
    holder_pid: int
    proxy: EgressProxy
    proxy_port: int
    _process: subprocess.Popen[bytes] = field(repr=False)
    _channel: socket.socket = field(repr=False)

    @property
    def egress(self) -> bool:
        return self.proxy.egress

    def alive(self) -> bool:
        return self._process.poll() is None

    def prefix(self) -> list[str]:
        """What runs a command line inside the namespace."""
        namespaces = f"/proc/{self.holder_pid}/ns"
        return [
            self.nsenter,
            f"--user={namespaces}/user",
            f"--net={namespaces}/net",
            "--preserve-credentials",
            "--",
        ]

    def environment(self, token: str) -> dict[str, str]:
        """The proxy variables for one command. With the network off, the proxy URL carries the
        launch's `token` as its password, so a refused request names the command that made
        it (`EgressProxy.refused`); with it on, it carries none."""
        credentials = f"{PROXY_USER}:{token}@" if not self.egress else ""
        url = f"http://{credentials}127.0.0.1:{self.proxy_port}"
        variables = dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"), url)
        variables |= {name.lower(): url for name in variables}
        variables |= {"NO_PROXY": LOOPBACK_NAMES, "no_proxy": LOOPBACK_NAMES}
        variables["NODE_USE_ENV_PROXY"] = "1"  # Node's own fetch (22.21+, 24+)
        return variables

    def close(self) -> None:
        """End the holder (it waits for end of file on the channel): no command can enter the
        namespace any more."""
        self._channel.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(HOLDER_SECONDS)
        if self._process.stderr is not None:
            self._process.stderr.close()


_networks: dict[tuple[str, bool], SharedNetwork | str] = {}
"""Per (bwrap, network setting): the namespace, or why there is none (tried once)."""
_lock = threading.Lock()


@atexit.register
def _close_all() -> None:
    """At a clean exit, end the holders now rather than leave them to notice."""
    for found in _networks.values():
        if isinstance(found, SharedNetwork):
            found.close()


def known_network(bwrap: str, *, egress: bool) -> SharedNetwork | str | None:
    """The namespace for this setting if it was made and its holder lives; its failure if it
    could not be made; None when it is yet to be made (or made again)."""
    found = _networks.get((bwrap, egress))
    if isinstance(found, SharedNetwork) and not found.alive():
        return None
    return found


def give_up(bwrap: str, *, egress: bool, reason: str) -> None:
    """Use no shared namespace for this setting from now on (it was made, but a command could
    not enter it: `reason`)."""
    with _lock:
        found = _networks.get((bwrap, egress))
        if isinstance(found, SharedNetwork):
            found.close()
        _networks[(bwrap, egress)] = reason


async def shared_network(bwrap: str, *, egress: bool) -> SharedNetwork | str:
    """The namespace for this setting, made at the first call (in a worker thread: it waits for
    a Python start); a string says why it cannot be had."""
    found = known_network(bwrap, egress=egress)
    if found is not None:
        return found
    return await anyio.to_thread.run_sync(_made, bwrap, egress)


def _made(bwrap: str, egress: bool) -> SharedNetwork | str:
    with _lock:
        found = known_network(bwrap, egress=egress)
        if found is None:
            found = _make(bwrap, egress)
            _networks[(bwrap, egress)] = found
        return found


def _make(bwrap: str, egress: bool) -> SharedNetwork | str:
    nsenter = shutil.which(NSENTER)
    if nsenter is None:
        return "nsenter (util-linux) is not installed"
    ours, theirs = socket.socketpair()
    command = [
        bwrap,
        "--unshare-user",
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--",
        sys.executable or "python3",
        "-I",
        "-S",
        str(HOLDER),
        str(theirs.fileno()),
        "--listen",
        str(PROXY_PORT),
    ]
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=[theirs.fileno()],
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
    except OSError as error:
        ours.close()
        return f"bubblewrap could not start the network holder: {error}"
    finally:
        theirs.close()
    try:
        ours.settimeout(HOLDER_SECONDS)
        message, ancillary, _, _ = ours.recvmsg(64, socket.CMSG_SPACE(4))
        ours.settimeout(None)
    except OSError as error:
        message, ancillary = b"", []
        failure = str(error)
    else:
        failure = ""
    if not message or not ancillary:
        process.kill()
        _, stderr = process.communicate()
        ours.close()
        said = stderr.decode("utf-8", "replace").strip().splitlines()
        return "the sandbox could not make a network namespace: " + (
            said[-1] if said else failure or f"exit status {process.returncode}"
        )
    descriptors = array.array("i")
    descriptors.frombytes(ancillary[0][2][: descriptors.itemsize])
    listener = socket.socket(fileno=descriptors[0])
    holder_pid = int(message)
    proxy = EgressProxy(listener, egress=egress)
    try:
        if os.readlink(f"/proc/{holder_pid}/ns/net") == os.readlink("/proc/self/ns/net"):
            raise OSError("the holder shares earshot's network namespace")
        proxy.start()
    except OSError as error:
        listener.close()
        ours.close()
        process.kill()
        process.wait()
        return f"the sandbox could not set up its network: {error}"
    return SharedNetwork(
        nsenter=nsenter,
        holder_pid=holder_pid,
        proxy=proxy,
        proxy_port=listener.getsockname()[1],
        _process=process,
        _channel=ours,
    )


__all__ = [
    "LOOPBACK_NAMES",
    "PROXY_PORT",
    "SharedNetwork",
    "give_up",
    "known_network",
    "shared_network",
]
