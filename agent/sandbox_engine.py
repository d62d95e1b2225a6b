"""What the command sandbox and its platform engines (`agent.sandbox_linux`,
`agent.sandbox_macos`) share: the places one command may write, and the engine's interface."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agent.protected_paths import ProtectedPaths, protected_paths
from agent.sandbox_config import SandboxConfig

TEMP_DIRS = ("/tmp",)
"""Writable besides `tempfile.gettempdir()`: many tools write to /tmp whatever $TMPDIR says."""


class SandboxRefused(Exception):
    """The sandbox cannot enforce its policy for this command (e.g. a protected name is a
    symbolic link a command could replace): the command must not run as if confined."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Places:
    """The policy for one command, in paths: computed when it starts (the file system moves)."""

    writable: tuple[Path, ...]
    """Canonical, existing: the roots, the temp dirs, the configured writable paths."""
    protected: ProtectedPaths
    network: bool


def sandbox_places(
    config: SandboxConfig, roots: Sequence[Path], *, environ: Mapping[str, str] | None = None
) -> Places:
    environ = os.environ if environ is None else environ
    candidates = [*roots, Path(tempfile.gettempdir()), *map(Path, TEMP_DIRS)]
    candidates += config.writable_paths
    writable: list[Path] = []
    for candidate in candidates:
        real = Path(os.path.realpath(candidate))
        if real.is_dir() and real not in writable:
            writable.append(real)
    return Places(
        writable=tuple(writable),
        protected=protected_paths(roots, environ=environ),
        network=config.network,
    )


class Engine(Protocol):
    """One platform's mechanism."""

    name: str

    async def probe(self, places: Places) -> str | None:
        """None when the mechanism works here, else why not (one line)."""
        ...

    def launch(
        self, places: Places, argv: Sequence[str], *, cwd: Path, scrub_env: bool
    ) -> AbstractAsyncContextManager[Sequence[str]]: ...

    def stopped(self, output: str) -> str | None:
        """Why the output says the sandbox stopped the command; None when it does not."""
        ...
