"""The `sandbox` settings, merged across scopes: whether commands run in the OS sandbox, which
extra paths they may write, and whether they get the network.

    "sandbox": {
      "enabled": true,                       // default true
      "network": true,                       // default true
      "writablePaths": ["~/.cache/pip"]      // default none; absolute or ~/...
    }

Each of the three can only WEAKEN the sandbox from a file that may grant (`agent.settings.trust`):
the user file, or a repository's files once the workspace is trusted. From any other file a setting
applies only when it restricts: `enabled: true` and `network: false` apply from everywhere,
`enabled: false`, `network: true` and `writablePaths` from an untrusted repository are ignored
(and listed in the trust notice). Like `mode`, `enabled` and `network` are taken from the most
local scope allowed to set them; `writablePaths` are concatenated.

Why the network is on by default: most coding work installs packages (`npm install`,
`pip install`, `cargo build`), and a sandbox that breaks that on every project would be turned
off. What the sandbox is for is writes (nothing outside the workspace, no protected path) and
secrets (no provider key, no view of earshot's process); a user who also wants no egress sets
`"network": false`.

Imported while the settings are read (an editor's start-up path): stdlib only, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.settings.schema import SandboxSettings


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxConfig:
    """The sandbox settings in effect for a session."""

    enabled: bool = True
    network: bool = True
    writable_paths: tuple[Path, ...] = ()
    """Absolute, `~` expanded (not resolved: the sandbox resolves them when it runs)."""


def expand_writable_path(entry: str, home: Path) -> Path:
    """A `writablePaths` entry (absolute, `~` or `~/...`: the schema checks) as a path."""
    if entry == "~" or entry.startswith("~/"):
        return home / entry[2:]
    return Path(entry)


def merge_sandbox(
    current: SandboxConfig, section: SandboxSettings, *, grants: bool, home: Path
) -> tuple[SandboxConfig, tuple[str, ...]]:
    """`current` with one file's `sandbox` section applied; `grants` False keeps only what
    restricts. Returns the merged settings and, for the trust notice, what was ignored."""
    ignored: list[str] = []
    merged = current
    if section.enabled is not None:
        if grants or section.enabled:
            merged = replace(merged, enabled=section.enabled)
        else:
            ignored.append("sandbox.enabled: false")
    if section.network is not None:
        if grants or not section.network:
            merged = replace(merged, network=section.network)
        else:
            ignored.append("sandbox.network: true")
    if section.writable_paths:
        if grants:
            paths = tuple(expand_writable_path(entry, home) for entry in section.writable_paths)
            merged = replace(merged, writable_paths=merged.writable_paths + paths)
        else:
            ignored.extend(f"sandbox.writablePaths: {entry}" for entry in section.writable_paths)
    return merged, tuple(ignored)
