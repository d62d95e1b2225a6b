"""Protected paths: places a write would let a repository or a model grant itself more than the
user gave it, so no write reaches them without the user approving that exact call.

- `.git/` of every repository inside the roots (its `config`, `hooks/` and `info/attributes` run
  code on the next `git status`: `core.fsmonitor`, `diff.external`, `alias.*`, hooks), and the
  target of a `.git` pointer file (worktrees, submodules);
- `.earshot/` anywhere inside the roots (settings that grant permissions, hooks, MCP servers);
- earshot's own user settings and data directories (trust, rules, transcripts, undo store);
- the user's shell start-up files (`~/.bashrc`, `~/.profile`, `~/.zshrc`, ...), which run in
  every shell the user opens.

earshot's own config and data directories are also HIDDEN from commands (`ProtectedPaths.hidden`):
the command sandbox shows them empty, because they hold what no command needs and the model must
not read (an inline `apiKey` in the settings, the transcripts of every session, the undo store's
copies of files).

It also answers "is this path a secret?" (`ProtectedPaths.secret_root`): well-known credential
files and directories (`~/.ssh`, `~/.aws`, `~/.netrc`, `~/.config/gh`, `~/.docker/config.json`,
`~/.kube/config`, `~/.gnupg`, ... see `CREDENTIAL_PATHS`), earshot's own settings files (an
inline `apiKey` lives there), and `.env*` files outside the roots. Reading one is denied unless
the user allows that place with an explicit rule (`agent.permission_policy`).

One module answers both questions for every enforcer: the permission policy (tool paths and
redirections it can read), and the command sandbox (which mounts the protected places
read-only).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PROTECTED_DIR_NAMES = frozenset({".git", ".earshot"})
"""A path component with one of these names (in any case: `.Git` is `.git` on macOS), inside a
root, is protected wherever it is."""
_CASELESS = sys.platform in ("darwin", "win32")

SHELL_STARTUP_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".inputrc",
    ".config/fish",
    ".config/environment.d",
)
"""Relative to the home directory. Directories cover everything below them."""

CREDENTIAL_PATHS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".oci",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".docker/config.json",
    ".kube/config",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".pgpass",
    ".my.cnf",
    ".boto",
    ".s3cfg",
    ".config/rclone",
    ".config/op",
    ".password-store",
    ".local/share/keyrings",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
)
"""Well-known credential files and directories, relative to the home directory."""

ENV_FILE_PREFIX = ".env"
"""`.env`, `.env.local`, `.envrc`...: secrets when outside the roots (inside, the project's own)."""


def _home(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME")
    return Path(home) if home else Path.home()


def config_dir(environ: Mapping[str, str]) -> Path:
    """`$XDG_CONFIG_HOME/earshot`, or `~/.config/earshot`."""
    xdg = environ.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else _home(environ) / ".config"
    return base / "earshot"


def data_dir(environ: Mapping[str, str]) -> Path:
    """`$XDG_DATA_HOME/earshot`, or `~/.local/share/earshot` (as `sessions.paths.data_dir`)."""
    xdg = environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else _home(environ) / ".local" / "share"
    return base / "earshot"


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _within(path: Path, root: Path) -> bool:
    # Strings, not `root in path.parents`: this runs for every search result a tool filters.
    text, prefix = str(path), str(root)
    if _CASELESS:  # `~/.SSH` is `~/.ssh` on a case-insensitive file system
        text, prefix = text.casefold(), prefix.casefold()
    return text == prefix or text.startswith(prefix if prefix.endswith("/") else prefix + "/")


def _git_pointer_target(dot_git: Path) -> Path | None:
    """The directory a `.git` FILE points at (`gitdir: ...`), resolved; None otherwise."""
    try:
        if not dot_git.is_file():
            return None
        first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[:1]
    except OSError:
        return None
    if not first or not first[0].startswith("gitdir:"):
        return None
    target = Path(first[0].removeprefix("gitdir:").strip())
    if not target.is_absolute():
        target = dot_git.parent / target
    return _real(target)


@dataclass(frozen=True)
class ProtectedPaths:
    """The protected places for one session (all resolved, absolute)."""

    roots: tuple[Path, ...]
    """The workspace roots: inside them, any `.git` or `.earshot` component is protected."""
    paths: tuple[Path, ...]
    """Concrete protected files or directories (a directory covers everything below it)."""
    secrets: tuple[Path, ...] = ()
    """Credential files and directories, and earshot's settings files (resolved)."""
    lexical: tuple[Path, ...] = ()
    """The same places as the names earshot, git and the shells look them up by (absolute,
    symlinks NOT resolved), for the command sandbox: if one of those names is a symbolic link
    a command may replace, resolving it protects the old target and not the name."""
    hidden: tuple[Path, ...] = ()
    """earshot's own config and data directories (resolved): the command sandbox shows them
    empty (see the module docstring)."""

    def covers(self, path: Path) -> bool:
        """Whether writing `path` (absolute; resolved here) touches a protected place."""
        resolved = _real(path)
        for candidate in {Path(os.path.abspath(path)), resolved}:
            if any(_within(candidate, protected) for protected in self.paths):
                return True
            for root in self.roots:
                if _within(candidate, root):
                    inside = Path(str(candidate)[len(str(root)) :].lstrip("/")).parts
                    if any(part.casefold() in PROTECTED_DIR_NAMES for part in inside):
                        return True
        return False

    def reason(self, path: Path) -> str:
        return f"writes to a protected path: {path}"

    def secret_root(self, path: Path) -> Path | None:
        """The secret place `path` (absolute) is in: a credential file or directory, an earshot
        settings file, or the `.env*` file itself when it is outside every root. None when
        `path` is not a secret. Checked as written and resolved, so a symlink cannot hide one."""
        resolved = _real(path)
        for candidate in (Path(os.path.abspath(path)), resolved):
            for secret in self.secrets:
                if _within(candidate, secret):
                    return secret
        for candidate in (Path(os.path.abspath(path)), resolved):
            if candidate.name.startswith(ENV_FILE_PREFIX) and not any(
                _within(candidate, root) for root in self.roots
            ):
                return candidate
        return None


def protected_paths(
    roots: Sequence[Path],
    *,
    environ: Mapping[str, str] | None = None,
    settings_files: Sequence[Path] = (),
) -> ProtectedPaths:
    """The protected places for a session whose workspace is `roots`. `settings_files`: the
    user's own earshot settings files when they are not in the default places (tests, a
    `config_home` override); they are protected and secret too."""
    environ = os.environ if environ is None else environ
    resolved_roots = tuple(_real(root) for root in roots)
    home = _home(environ)
    config = config_dir(environ)
    own_settings = [_real(config / "settings.json"), _real(config / "projects")]
    own_settings += [_real(path) for path in settings_files]
    named = [config, data_dir(environ), *(home / name for name in SHELL_STARTUP_FILES)]
    concrete: list[Path] = [*(_real(path) for path in named), *own_settings]
    lexical: list[Path] = [Path(os.path.abspath(path)) for path in named]
    for root in resolved_roots:
        for name in sorted(PROTECTED_DIR_NAMES):
            concrete.append(root / name)
            lexical.append(root / name)
        target = _git_pointer_target(root / ".git")
        if target is not None:
            concrete.append(target)
            lexical.append(target)
    secrets = [_real(home / name) for name in CREDENTIAL_PATHS] + own_settings
    return ProtectedPaths(
        roots=resolved_roots,
        paths=tuple(_outermost(concrete)),
        secrets=tuple(_unique(secrets)),
        lexical=tuple(_outermost(lexical)),
        hidden=tuple(_outermost([_real(config), _real(data_dir(environ))])),
    )


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: set[Path] = set()
    result: list[Path] = []
    for path in paths:
        if path not in seen:
            seen.add(path)
            result.append(path)
    return result


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """`paths` without those below another of them (already covered; and the sandbox cannot make
    a mount point inside a directory it has made read-only)."""
    unique = _unique(paths)
    kept = set(unique)
    return [path for path in unique if not any(parent in kept for parent in path.parents)]
