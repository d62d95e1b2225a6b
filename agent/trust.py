"""The workspace trust boundary: what a repository you merely opened may do through its settings.

A checked-in `.earshot/settings.json` is somebody else's code. If it could add `allow` rules,
hooks or MCP servers, opening a repository would run whatever it says, which is the one thing no
extension may do (grant a permission, or run code, on its own authority). So settings are split
in two kinds:

- RESTRICTIVE settings apply from every scope, trusted or not: `deny` and `ask` rules, and a
  `mode` no more permissive than the one otherwise in effect (`plan` < `ask` < `accept-edits` <
  `auto` < `yolo`). Plain data applies too: `model`, `models`, and providers that read no
  environment variable (a built-in provider's URL and key are guarded in `agent.settings`).
- GRANTING or EXECUTING settings apply from repository content only when the workspace is
  trusted: `allow` rules, `hooks`, `mcpServers`, a more permissive `mode`, and providers with an
  `apiKeyEnv` (that would read any variable of yours and send it where the repository says), and
  whatever weakens the command sandbox (`sandbox.enabled: false`, `sandbox.network: true`,
  `sandbox.writablePaths`; see `agent.sandbox_config`).

Which files are repository content: the project file, always; the local file
(`settings.local.json`, where "always allow" answers are saved) only when git tracks it (a
committed "local" file came with the clone). `git ls-files --error-unmatch` decides, run with a
short timeout in the file's directory, with the repository's `core.fsmonitor` and hooks switched
off (they would run code). No git, or not a repository: the file is the user's. Any other git
failure (a timeout, "dubious ownership", a path behind a symlink) counts as tracked: failing
closed costs a prompt, failing open costs a shell.

Trust is recorded only in the user's settings, `"trustedDirectories": ["/abs/path", ...]`; a
trusted directory covers everything below it, compared after resolving symlinks. `earshot trust
[DIR]`, `earshot untrust [DIR]` and `earshot trust --list` edit it. What an untrusted workspace's
settings would have granted is collected in `IgnoredSettings`, whose `notice` tells the user once
per session what was skipped and how to trust the workspace.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.modes import Mode

TRUSTED_DIRECTORIES_KEY = "trustedDirectories"
GIT_TIMEOUT_SECONDS = 3.0
MODE_ORDER: Mapping[Mode, int] = {"plan": 0, "ask": 1, "accept-edits": 2, "auto": 3, "yolo": 4}
"""How much each mode lets run without asking (an untrusted file may only lower it)."""

_GIT_ENV_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CEILING_DIRECTORIES")
_SHOWN_MAX = 80


def resolve_directory(path: Path | str) -> Path:
    """Absolute, `~` expanded, symlinks and `..` resolved."""
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def is_trusted(directory: Path, trusted: Iterable[Path]) -> bool:
    """Whether `directory` is one of `trusted`, or below one (both sides resolved)."""
    resolved = resolve_directory(directory)
    for entry in trusted:
        root = resolve_directory(entry)
        if resolved == root or root in resolved.parents:
            return True
    return False


def tracked_by_git(path: Path, *, timeout: float = GIT_TIMEOUT_SECONDS) -> bool:
    """Whether git tracks `path` (so it is repository content, not the user's own file).

    False when git is not installed or the directory is not in a repository; True on any other
    failure (see the module docstring: failing closed)."""
    import subprocess  # only here: the settings module (start-up path) imports this one

    directory = resolve_directory(path.parent)
    environ = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROPPED}
    environ.update(LC_ALL="C", LANGUAGE="C", GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    command = [
        "git",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
        "ls-files",
        "--error-unmatch",
        "--",
        path.name,
    ]
    try:
        done = subprocess.run(
            command,
            cwd=directory,
            env=environ,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        return False  # no git (or the directory vanished): nothing can be tracked
    except (OSError, subprocess.TimeoutExpired):
        return True
    if done.returncode == 0:
        return True
    if done.returncode == 1:
        return False
    return b"not a git repository" not in done.stderr


@dataclass(frozen=True, slots=True, kw_only=True)
class IgnoredSettings:
    """What untrusted repository settings asked for and did not get."""

    allow: tuple[str, ...] = ()
    """Allow rules, as written."""
    hooks: tuple[str, ...] = ()
    """`event: command` per hook."""
    mcp_servers: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    """Provider ids the repository defined (they decide where the conversation is sent)."""
    mode: Mode | None = None
    model: str | None = None
    """A model on one of those providers."""
    sandbox: tuple[str, ...] = ()
    """What would have weakened the command sandbox, e.g. `sandbox.enabled: false`."""
    sources: tuple[Path, ...] = ()
    """The files the ignored settings came from."""

    def __bool__(self) -> bool:
        return bool(
            self.allow
            or self.hooks
            or self.mcp_servers
            or self.providers
            or self.mode
            or self.model
            or self.sandbox
        )

    def notice(self, cwd: Path) -> str:
        """One message for the user: what was ignored, from where, and how to trust `cwd`."""
        import shlex

        parts: list[str] = []
        if self.allow:
            parts.append("allow rules " + _listed(self.allow))
        if self.hooks:
            parts.append(f"{_count(len(self.hooks), 'hook')} ({_listed(self.hooks)})")
        if self.mcp_servers:
            parts.append("MCP servers " + _listed(self.mcp_servers))
        if self.providers:
            parts.append("providers " + _listed(self.providers))
        if self.model is not None:
            parts.append(f"model {_shown(self.model, limit=200)}")
        if self.mode is not None:
            parts.append(f"mode {self.mode}")
        if self.sandbox:
            parts.append(_listed(self.sandbox))
        files = ", ".join(_shown(str(source), limit=400) for source in self.sources)
        directory = _shown(str(resolve_directory(cwd)), limit=400)
        return (
            f"This workspace is not trusted, so earshot ignored what its settings ({files}) "
            f"would grant or run: {'; '.join(parts)}. Their deny and ask rules still apply. If "
            f"you trust this repository, run `earshot trust {shlex.quote(directory)}` and start "
            "a new session."
        )


def _listed(items: Iterable[str]) -> str:
    return ", ".join(_shown(item) for item in items)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _shown(text: str, *, limit: int = _SHOWN_MAX) -> str:
    """Repository text made safe to print: no control characters (a terminal escape in a hook
    command would otherwise reach the user's terminal), and not too long."""
    clean = "".join(char if char.isprintable() else "?" for char in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"
