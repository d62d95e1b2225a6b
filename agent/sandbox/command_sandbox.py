"""The command sandbox: every command the model runs (the `bash` tool, locally or in an editor
terminal) runs inside an operating-system sandbox.

The invariant it serves: no command writes outside the workspace roots, or to a protected path,
unless the user approved that exact call in a prompt that said so. A parser cannot know what an
arbitrary program writes (`cp x ../y`, `git diff --output=../f`, a `package.json` script), so the
operating system decides instead:

- writable: the workspace roots, the session's private temp dir (`/tmp` and `$TMPDIR` inside
  on Linux, `$TMPDIR` on macOS; made when the session opens, removed when it closes), and the
  user's `sandbox.writablePaths`; everything else is read-only, and the host's `/tmp` (the
  user's other checkouts) is not even visible on Linux;
- inside the writable places, the protected paths (`agent.protected_paths`: `.git` and
  `.earshot` of every root, the target of a `.git` pointer file, earshot's own config and data
  dirs, the shell start-up files) are read-only too, whether they exist yet or not;
- `.git/` is read-only as a whole. Git needs its top-level directory writable for the lock files
  of ordinary commands (`index.lock`, `HEAD.lock`), and that directory also holds `config` and
  `hooks/`, which run code on the user's next `git status`; no split is both safe and useful, so
  `git add` and `git commit` stop with "Read-only file system" and earshot offers to run them
  outside the sandbox, as any other stopped command;
- the command sees no earshot process and no earshot environment: it gets its own pid namespace
  and /proc (Linux), and an environment without the provider keys (`agent.tool_env`), scrubbed
  before the sandbox starts so that no process inside holds them;
- the network is reached through earshot's proxy or cut (`sandbox.network`, on by default:
  `agent.settings.sandbox`); on Linux commands have a network namespace of their own
  (`agent.sandbox.network`), so the host's abstract unix sockets are out of reach either way;
- no unix socket of the host is reachable: the places services keep theirs are hidden, every
  path socket bound on the host is covered, and the variables naming them are removed
  (`agent.sandbox.doors`: tmux, the ssh and gpg agents, D-Bus, X11, Wayland, Docker, editors'
  servers).

Where the sandbox cannot run (no bubblewrap, user namespaces forbidden, Windows...) the session
says so once and every command asks (`agent.permissions.gate`); a user who accepts unconfined
commands turns the sandbox off (`"sandbox": {"enabled": false}`), and modes and rules decide as
they did before there was a sandbox.

A command the sandbox stopped is recognised (`Sandbox.stopped`), is reported to the model as
such, and the user is asked whether to run it outside the sandbox, for that call only
(`agent.tools.bash`). Where the sandbox sees the stop itself, the command's output is not taken
as evidence: with the network off on Linux, a request its proxy refused is the evidence, and a
command that merely prints "Could not resolve host" gets no offer. A write refused by a
read-only mount leaves nothing the sandbox can see (the kernel answers EROFS to the process and
records nothing; seeing it would take tracing every write system call, ptrace or seccomp user
notifications on every `open`, or eBPF, which needs root), so "Read-only file system" in the
output still counts, and a command can fake it by printing it; so can it bwrap's own "bwrap:"
lines (they share the command's stderr) and a hidden service's error. The offer names the exact
command either way.

Mechanisms: bubblewrap on Linux (`agent.sandbox.linux`, which says why not Landlock), Seatbelt
(`sandbox-exec`) on macOS (`agent.sandbox.macos`). Hooks and MCP servers are the user's own
configuration and are not sandboxed.
"""

from __future__ import annotations

import contextvars
import os
import re
import shutil
import sys
import tempfile
import weakref
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal, TypeAlias

from agent.sandbox.engine import Engine, Launch, Places, SandboxRefused, sandbox_places
from agent.settings import SandboxConfig

SandboxStatus: TypeAlias = Literal["active", "off", "unavailable"]
"""`active`: commands run confined; `off`: the user turned the sandbox off (commands run as they
always did); `unavailable`: the user wants a sandbox and none can run (every command asks)."""

# ---------------------------------------------------------------------- stopped commands

_WRITE_DENIED = re.compile(r"read-only file system|\bEROFS\b|\[Errno 30\]", re.IGNORECASE)
_BUSY = re.compile(r"device or resource busy|\bEBUSY\b|\[Errno 16\]", re.IGNORECASE)
_NO_NETWORK = re.compile(
    r"network is unreachable|temporary failure in name resolution|could not resolve host"
    r"|name or service not known|connection refused|\bENETUNREACH\b|\bECONNREFUSED\b"
    r"|\bEAI_AGAIN\b|getaddrinfo ENOTFOUND",
    re.IGNORECASE,
)
_HIDDEN_SERVICE = re.compile(
    r"cannot connect to the docker daemon|failed to connect to bus|unable to autolaunch a dbus",
    re.IGNORECASE,
)


def stopped_by_policy(output: str, *, network: bool) -> str | None:
    """The platform-independent signs in a command's output that the sandbox stopped it: a
    write refused with EROFS (everything read-only answers so, and an unconfined command rarely
    meets a read-only file system), a protected mount point that cannot be removed or renamed
    (EBUSY), a hidden service, and, with the network cut where the sandbox cannot see the
    network (`network` False), a failed connection or name lookup. Any of these can be printed
    by a command that was not stopped (the module docstring says why nothing better exists)."""
    if _WRITE_DENIED.search(output):
        return "it tried to write outside the places a command may write (Read-only file system)"
    if _BUSY.search(output):
        return "it tried to remove or rename a protected path (Device or resource busy)"
    if _HIDDEN_SERVICE.search(output):
        return "it tried to reach a system service the sandbox hides (D-Bus, Docker...)"
    if not network and _NO_NETWORK.search(output):
        return "it tried to use the network, which the sandbox settings cut"
    return None


# ------------------------------------------------------------------------------ the sandbox


_last_launch: contextvars.ContextVar[Launch | None] = contextvars.ContextVar(
    "earshot_last_launch", default=None
)
"""The task's latest confined command: `Sandbox.stopped` reads what the sandbox saw of it. Set
where the command line is made, in the task that runs the command and then asks."""


class Sandbox:
    """A session's command sandbox: its status, its private temp dir, and how to confine one
    command line."""

    def __init__(
        self,
        *,
        status: SandboxStatus,
        config: SandboxConfig,
        roots: Sequence[Path],
        engine: Engine | None = None,
        reason: str = "",
    ) -> None:
        self.status: SandboxStatus = status
        self.config = config
        self.roots = tuple(roots)
        self.engine = engine
        self.reason = reason
        """Why the sandbox is unavailable (or turned off)."""
        self.temp: Path | None = None
        """The session's private temp dir (the commands' `/tmp`): made for the first command,
        removed when the session closes (or, failing that, when this object goes)."""
        self._remove_temp: Callable[[], object] | None = None

    @property
    def active(self) -> bool:
        return self.status == "active" and self.engine is not None

    def places(self) -> Places:
        if self.temp is None and self.active:
            _remove_stale_temps()
            self.temp = Path(tempfile.mkdtemp(prefix=f"{_TEMP_PREFIX}{os.getpid()}-"))
            self._remove_temp = weakref.finalize(self, shutil.rmtree, self.temp, True)
        return sandbox_places(self.config, self.roots, temp=self.temp)

    @asynccontextmanager
    async def launch(
        self, argv: Sequence[str], *, cwd: Path, scrub_env: bool
    ) -> AsyncGenerator[Sequence[str]]:
        """`agent.backends.Confinement.launch`."""
        if self.engine is None or self.status != "active":
            raise SandboxRefused(f"the command sandbox is {self.status}")
        async with self.engine.launch(self.places(), argv, cwd=cwd, scrub_env=scrub_env) as launch:
            _last_launch.set(launch)
            yield launch.argv

    def stopped(self, output: str, exit_code: int | None) -> str | None:
        """Why the sandbox stopped the task's latest confined command, which ended with
        `exit_code` and printed `output`; None when nothing says it did (a command that
        succeeded was not stopped). What the sandbox saw comes first; see `stopped_by_policy`
        for what is read from the output, and why that can be faked."""
        if exit_code == 0 or self.engine is None:
            return None
        launch = _last_launch.get()
        if launch is not None and launch.refused:
            shown = ", ".join(launch.refused[:3])
            return f"it tried to reach {shown} over the network, which the sandbox settings cut"
        observed = launch is not None and launch.observes_network
        return self.engine.stopped(output) or stopped_by_policy(
            output, network=self.config.network or observed
        )

    def missing_defences(self) -> tuple[str, ...]:
        """What the sandbox cannot guard here, one sentence each (`Engine.missing_defences`)."""
        if not self.active or self.engine is None:
            return ()
        return self.engine.missing_defences(self.places())

    def close(self) -> None:
        """Remove the private temp dir (the session closes; its commands have ended)."""
        if self._remove_temp is not None:
            self._remove_temp()
            self._remove_temp = None
            self.temp = None

    def notice(self) -> str | None:
        """What the user hears once per session: that no sandbox could run, or which of its
        defences cannot be had here."""
        missing = self.missing_defences()
        if missing:
            return "The command sandbox is weaker here: " + " ".join(missing)
        if self.status != "unavailable":
            return None
        return (
            f"No command sandbox is available ({self.reason}), so every command will ask before "
            "it runs, whatever the mode or allow rules say. "
            + _INSTALL_HINT.get(sys.platform[:5], "")
            + 'To run commands unconfined as modes and rules allow, set "sandbox": '
            '{"enabled": false} in your user settings.'
        )


_INSTALL_HINT = {
    "linux": "Install bubblewrap (e.g. `apt install bubblewrap`) to confine them. ",
}


# ------------------------------------------------------------------------- private temp dirs

_TEMP_PREFIX = "earshot-sandbox-"
_STALE_TEMP = re.compile(re.escape(_TEMP_PREFIX) + r"(\d+)-")


def _remove_stale_temps() -> None:
    """Remove the private temp dirs of earshot processes that are gone: one killed (SIGKILL, an
    editor closing) or ended without closing its sessions leaves its dirs behind. The pid in
    the name says whose a dir is; only the user's own are touched."""
    uid = os.getuid()
    try:
        entries = list(os.scandir(tempfile.gettempdir()))
    except OSError:
        return
    for entry in entries:
        match = _STALE_TEMP.match(entry.name)
        if match is None or int(match.group(1)) == os.getpid():
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid or not entry.is_dir(
                follow_symlinks=False
            ):
                continue
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue


# ------------------------------------------------------------------------------- opening

_probes: dict[tuple[str, bool], str | None] = {}
"""Probe results per (engine, network): one per process, not one per session."""


def platform_engine() -> Engine | str:
    """This platform's engine, or why there is none."""
    # Each engine is imported on its own platform only (the other's would never run here).
    if sys.platform.startswith("linux"):
        from agent.sandbox.linux import find_bubblewrap

        return find_bubblewrap()
    if sys.platform == "darwin":
        from agent.sandbox.macos import find_seatbelt

        return find_seatbelt()
    return f"earshot has no command sandbox for {sys.platform}"


async def open_sandbox(
    config: SandboxConfig, roots: Sequence[Path], *, engine: Engine | str | None = None
) -> Sandbox:
    """The sandbox for a session in `roots`: `off` when the settings say so, `unavailable` when
    this machine cannot run one (said once, by `Sandbox.notice`), else `active`. `engine`
    defaults to this platform's; tests pass a string (the reason there is none)."""
    if not config.enabled:
        return Sandbox(status="off", config=config, roots=roots, reason="turned off in settings")
    found = platform_engine() if engine is None else engine
    if isinstance(found, str):
        return Sandbox(status="unavailable", config=config, roots=roots, reason=found)
    key = (found.name, config.network)
    if key not in _probes:
        _probes[key] = await found.probe(sandbox_places(config, roots))
    failure = _probes[key]
    if failure is not None:
        return Sandbox(status="unavailable", config=config, roots=roots, reason=failure)
    return Sandbox(status="active", config=config, roots=roots, engine=found)


__all__ = [
    "Engine",
    "Places",
    "Sandbox",
    "SandboxRefused",
    "SandboxStatus",
    "open_sandbox",
    "sandbox_places",
    "stopped_by_policy",
]
