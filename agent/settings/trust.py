"""The workspace trust boundary: what a directory you merely opened may do.

Everything that arrived with a project (cloned, unpacked, copied) is somebody else's: the
checked-in `.earshot/settings.json`, the `.earshot/settings.local.json` beside it, the skills in
`.earshot/skills/`. If they could add `allow` rules, hooks or MCP servers, opening a repository
would run whatever they say. And nothing in the directory can say who wrote it: a committed file
shows as untracked when `.earshot/` holds its own `HEAD`, `objects/` and `refs/` (git then takes
it for a repository of its own), and a tarball has no git at all. So earshot does not ask git,
or anyone: every file inside the project directory is repository content.

- RESTRICTIVE settings apply from every scope, trusted or not: `deny` and `ask` rules, and a
  `mode` no more permissive than the one otherwise in effect (`plan` < `ask` < `accept-edits` <
  `auto` < `yolo`). Plain data applies too: `models`, and a `model` on the provider the user's
  own settings chose (a built-in provider's URL and key are guarded in `agent.settings.scopes`).
- GRANTING or EXECUTING settings apply from repository content only when the workspace is
  trusted: `allow` rules, `hooks`, `mcpServers`, a more permissive `mode`, `providers` and a
  `model` on any other provider (they decide where the conversation is sent), and the
  project's skills (`agent.skills`: instructions the model would follow, and text sent with the
  first request), whatever weakens the command sandbox (`sandbox.enabled: false`,
  `sandbox.network: true`, `sandbox.writablePaths`; see `agent.settings.sandbox`), and the
  `verify` commands and `lsp` servers that would run on edits (`agent.settings.code`).

What the user said stays theirs without trusting anything: their user settings, and the
REMEMBERED file, `$XDG_CONFIG_HOME/earshot/projects/<dir name>-<hash>.json`, where "always
allow" and "always reject" answers are saved, keyed by the resolved directory and the project it
holds (`<hash>` is the first 16 hex digits of the SHA-256 of its path and its identity,
`agent.settings.project_identity`: the directory's and its `.git`'s inode and birth time), so that
another repository put at the same path starts with no answers. Both live in the user's config
directory, which no project can write: it is outside the workspace, and a protected path
(`agent.protected_paths`) that every write asks about in every mode but yolo, so not even a
model with an allow rule can forge an answer there.

Migration: earlier versions kept "always allow" answers in `.earshot/settings.local.json` and
applied that file unless git tracked it. Such a file is now repository content; in an untrusted
directory the notice says so, and the user either trusts the directory (`earshot trust`) or
answers again (the answer lands in the remembered file).

Trust is recorded only in the user's settings, `"trustedDirectories": ["/abs/path", ...]`; a
trusted directory covers everything below it, compared after resolving symlinks. `earshot trust
[DIR]`, `earshot untrust [DIR]` and `earshot trust --list` edit it. What an untrusted workspace
would have granted is collected in `IgnoredSettings`, whose `notice` tells the user once per
session what was skipped and how to trust the workspace; it is given whenever anything was.
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
LOCAL_FILE_NAME = "settings.local.json"
SKILL_FILE = "SKILL.md"
MODE_ORDER: Mapping[Mode, int] = {"plan": 0, "ask": 1, "accept-edits": 2, "auto": 3, "yolo": 4}
"""How much each mode lets run without asking (an untrusted file may only lower it)."""

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


def remembered_file_name(directory: Path) -> str:
    """`<dir name>-<hash>.json`: the name of the user's remembered file for `directory` (see the
    module docstring)."""
    import hashlib
    import re

    from agent.settings.project_identity import directory_identity

    resolved = str(resolve_directory(directory))
    # The path AND what is there now: another project at the same path gets another file.
    key = f"{resolved}\0{directory_identity(Path(resolved))}"
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(resolved).name)[:40].strip(".") or "root"
    return f"{name}-{digest}.json"


def project_skills(cwd: Path) -> tuple[str, ...]:
    """The folders of `<cwd>/.earshot/skills` holding a `SKILL.md` (what an untrusted workspace
    does not load), without reading them."""
    try:
        folders = sorted((cwd / ".earshot" / "skills").iterdir())
    except OSError:
        return ()
    return tuple(folder.name for folder in folders if (folder / SKILL_FILE).is_file())


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
    """A model on another provider than the user's (or on one of those providers)."""
    skills: tuple[str, ...] = ()
    """The project's skills, not loaded."""
    """A model on one of those providers."""
    sandbox: tuple[str, ...] = ()
    """What would have weakened the command sandbox, e.g. `sandbox.enabled: false`."""
    verify: tuple[str, ...] = ()
    """`verify` commands (they would run after edits)."""
    lsp: tuple[str, ...] = ()
    """`lsp.<name>: command` per language server (they would run on edits)."""
    cache: str | None = None
    """A longer `cache` than the user's (the vendor would keep the prompts longer)."""
    sources: tuple[Path, ...] = ()
    """The files (and the skills directory) the ignored settings came from."""

    def __bool__(self) -> bool:
        return bool(
            self.allow
            or self.hooks
            or self.mcp_servers
            or self.providers
            or self.mode
            or self.model
            or self.skills
            or self.sandbox
            or self.verify
            or self.lsp
            or self.cache
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
        if self.skills:
            parts.append("skills " + _listed(self.skills))
        if self.sandbox:
            parts.append(_listed(self.sandbox))
        if self.verify:
            parts.append("verify commands " + _listed(self.verify))
        if self.lsp:
            parts.append("language servers " + _listed(self.lsp))
        if self.cache is not None:
            parts.append(f"cache {self.cache}")
        files = ", ".join(_shown(str(source), limit=400) for source in self.sources)
        directory = _shown(str(resolve_directory(cwd)), limit=400)
        notice = (
            f"This workspace is not trusted, so earshot ignored what its settings ({files}) "
            f"would grant or run: {'; '.join(parts)}. Their deny and ask rules still apply. If "
            f"you trust this repository, run `earshot trust {shlex.quote(directory)}` and start "
            "a new session."
        )
        if any(source.name == LOCAL_FILE_NAME for source in self.sources):
            notice += (
                f" Note: .earshot/{LOCAL_FILE_NAME} is in the project directory, so earshot "
                'treats it as the repository\'s, whoever wrote it; your "always allow" answers '
                "are now kept in your own config directory (earshot/projects/)."
            )
        return notice


def _listed(items: Iterable[str]) -> str:
    return ", ".join(_shown(item) for item in items)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _shown(text: str, *, limit: int = _SHOWN_MAX) -> str:
    """Repository text made safe to print: no control characters (a terminal escape in a hook
    command would otherwise reach the user's terminal), and not too long."""
    clean = "".join(char if char.isprintable() else "?" for char in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"
