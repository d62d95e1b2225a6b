"""What the command sandbox and its platform engines (`agent.sandbox.linux`,
`agent.sandbox.macos`) share: the places one command may write, and the engine's interface."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agent.protected_paths import ProtectedPaths, protected_paths
from agent.settings import SandboxConfig

TEMP_INSIDE = "/tmp"
"""Where a command finds its session's private temp dir on Linux (bound there), and what its
`$TMPDIR` says: the host's `/tmp` (the user's other checkouts, tmux's and X11's sockets) is
out of its sight."""


class SandboxRefused(Exception):
    """The sandbox cannot enforce its policy for this command (e.g. a protected name is a
    symbolic link a command could replace): the command must not run as if confined."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Places:
    """The policy for one command, in paths: computed when it starts (the file system moves)."""

    writable: tuple[Path, ...]
    """Canonical, existing: the roots and the configured writable paths."""
    protected: ProtectedPaths
    network: bool
    temp: Path | None = None
    """The session's private temp dir (canonical, on the host): the one temp dir a command may
    write. Linux binds it at `/tmp` (`TEMP_INSIDE`); macOS lets it be written where it is."""
    exposed: tuple[Path, ...] = ()
    """Directories under the host's `/tmp` that commands still read (Linux binds them read-only
    over the private `/tmp`): earshot's own Python environment and the `$PATH` entries there, so
    that a tool earshot runs (a verify command, a language server, `python`) is found inside
    the sandbox when earshot is installed in a checkout under `/tmp`, as CI runners do."""


@dataclass(slots=True)
class Launch:
    """One confined command line, and what the sandbox itself saw while the command ran."""

    argv: Sequence[str]
    refused: tuple[str, ...] = field(default=())
    """The network requests the sandbox refused the command (the network is off): filled in
    when the command has ended. No output can fake these."""
    observes_network: bool = False
    """Whether the sandbox sees the command's use of the network (`refused`): then a network
    error in its output proves nothing and is not taken as the sandbox stopping it."""


def sandbox_places(
    config: SandboxConfig,
    roots: Sequence[Path],
    *,
    environ: Mapping[str, str] | None = None,
    temp: Path | None = None,
) -> Places:
    environ = os.environ if environ is None else environ
    candidates = [*roots, *config.writable_paths]
    writable: list[Path] = []
    for candidate in candidates:
        real = Path(os.path.realpath(candidate))
        if real.is_dir() and real not in writable:
            writable.append(real)
    return Places(
        writable=tuple(writable),
        protected=protected_paths(roots, environ=environ),
        network=config.network,
        temp=Path(os.path.realpath(temp)) if temp is not None else None,
        exposed=exposed_places(environ) if temp is not None else (),
    )


def exposed_places(environ: Mapping[str, str]) -> tuple[Path, ...]:
    """The existing directories under the host's `/tmp` that hold earshot's interpreter and
    environment or are on `$PATH` (never `/tmp` itself, which would undo the private one).
    Read-only: a command runs what is there but plants nothing (`core.fsmonitor` in another
    checkout), and the socket sweep covers any socket bound inside them."""
    candidates = [
        sys.prefix,
        sys.base_prefix,
        os.path.dirname(sys.executable),
        *environ.get("PATH", "").split(os.pathsep),
    ]
    found: dict[Path, None] = {}
    for candidate in candidates:
        if not os.path.isabs(candidate):
            continue
        real = os.path.realpath(candidate)
        if not real.startswith(TEMP_INSIDE + "/") or not os.path.isdir(real):
            continue
        found[Path(real)] = None
    return tuple(found)


class Engine(Protocol):
    """One platform's mechanism."""

    name: str

    async def probe(self, places: Places) -> str | None:
        """None when the mechanism works here, else why not (one line)."""
        ...

    def launch(
        self, places: Places, argv: Sequence[str], *, cwd: Path, scrub_env: bool
    ) -> AbstractAsyncContextManager[Launch]: ...

    def stopped(self, output: str) -> str | None:
        """Why the output says the sandbox stopped the command; None when it does not."""
        ...

    def missing_defences(self, places: Places) -> tuple[str, ...]:
        """The defences this engine cannot put up here (one sentence each, for the session's
        notice); empty when every one holds."""
        ...
