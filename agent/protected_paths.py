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
the user allows that place with an explicit rule (`agent.permissions.policy`).

One module answers both questions for every enforcer: the permission policy (tool paths and
redirections it can read), and the command sandbox (which mounts the protected places
read-only).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from providers.records import Record

PROTECTED_DIR_NAMES = frozenset({".git", ".earshot"})
"""A path component with one of these names (in any case: `.Git` is `.git` on macOS), inside a
root, is protected wherever it is."""
_CASELESS = sys.platform in ("darwin", "win32")

SHELL_STARTUP_FILES = (
    # bash: login files, Debian's and Ubuntu's `.bashrc` sources `.bash_aliases`, Fedora's
    # sources every file in `.bashrc.d/`
    ".bashrc",
    ".bashrc.d/",
    ".bash_aliases",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    # zsh (macOS's default shell; `$ZDOTDIR` is added when set), and oh-my-zsh, which every
    # `.zshrc` it installed sources, `custom/` included
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".oh-my-zsh/",
    # the other shells
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".xonshrc",
    ".config/fish/",
    ".config/nushell/",
    ".config/xonsh/",
    ".config/elvish/",
    ".config/powershell/",
    ".inputrc",
)
"""Files every shell the user opens runs, relative to the home directory. A name ending in `/`
is a directory, and covers everything below it; the others are files (which matters for the
sandbox's placeholder when one is missing: `ProtectedPaths.files`)."""

AUTOSTART_PATHS = (
    # started at login or by the user's service manager, outside any sandbox
    ".config/autostart/",
    ".config/autostart-scripts/",
    ".config/plasma-workspace/",
    ".config/systemd/",
    ".local/share/systemd/",
    ".config/environment.d/",
    ".pam_environment",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".xsessionrc",
    "Library/LaunchAgents/",
    # put first on PATH by Debian's, Ubuntu's and Fedora's `.profile`/`.bashrc` when they exist:
    # a `git` or `ls` there runs instead of the real one
    ".local/bin/",
    "bin/",
    # run by programs the user starts, outside the sandbox: git everywhere (`core.fsmonitor`,
    # `alias.*`, `core.pager`), the user's editors and terminal multiplexer, build tools
    ".gitconfig",
    ".config/git/",
    ".config/zed/",
    ".config/Code/",
    ".config/nvim/",
    ".vimrc",
    ".vim/",
    ".emacs",
    ".emacs.d/",
    ".config/emacs/",
    ".tmux.conf",
    ".config/tmux/",
    ".cargo/config",
    ".cargo/config.toml",
    ".gradle/init.d/",
    ".gradle/init.gradle",
)
"""Relative to the home directory: what runs at the user's next login, next program start or
next build without a prompt. Directories (ending in `/`) cover everything below them.

Checked against Claude Code's sandbox runtime (its "dangerous files": shell rc files,
`.gitconfig`, `.gitmodules`, `.ripgreprc`, `.mcp.json`; "dangerous directories": `.vscode`,
`.idea`, `.git/hooks`, its own commands) and Codex (`.git`, `.codex`): their project-level names
are earshot's `.git` and `.earshot`; `.ripgreprc` is read only where `$RIPGREP_CONFIG_PATH` names
it (earshot runs ripgrep with `--no-config`); a project's `.gitmodules` and editor folders
(`.vscode`, `.idea`, `.zed`) are project content the model is often asked to edit, and are left
writable (README, "Security model", says so). The credential places (`CREDENTIAL_PATHS`) are
protected too: `~/.ssh/config` and `authorized_keys`, `~/.aws/config`'s `credential_process`,
`~/.kube/config`'s exec plugins and `~/.npmrc`'s `script-shell` run code or let someone in."""

SHELL_VARIABLES = ("ZDOTDIR",)
"""A directory zsh reads its start-up files from instead of the home directory."""
SHELL_FILE_VARIABLES = ("BASH_ENV", "ENV")
"""Files that non-interactive bash (`BASH_ENV`) and interactive sh (`ENV`) run first."""

CREDENTIAL_PATHS = (
    ".ssh/",
    ".gnupg/",
    ".aws/",
    ".azure/",
    ".config/gcloud/",
    ".oci/",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh/",
    ".config/hub/",
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
    ".config/rclone/",
    ".config/op/",
    ".password-store/",
    ".local/share/keyrings/",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
)
"""Well-known credential files and directories (ending in `/`), relative to the home
directory."""

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


class _Resolver:
    """`os.path.realpath` for many paths that share directories (one session's protected
    places, computed again for every sandboxed command): a path's directory is resolved once,
    and the path itself costs one `lstat` unless it is a symbolic link. Strings, not `Path`s:
    pathlib's parsing cost more than the system calls."""

    def __init__(self) -> None:
        self._directories: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        absolute = os.path.abspath(path)
        directory, name = os.path.split(absolute)
        if not name:
            return absolute
        real_directory = self._directories.get(directory)
        if real_directory is None:
            real_directory = self._directories[directory] = os.path.realpath(directory)
        joined = os.path.join(real_directory, name)
        return os.path.realpath(joined) if os.path.islink(joined) else joined


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


class ProtectedPaths(Record, kw_only=False):
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
    files: frozenset[Path] = frozenset()
    """The places of `paths` known to be files (`~/.gitconfig`, `~/.npmrc`...): where one is
    missing, the sandbox's read-only placeholder is an empty file, which programs read as empty
    configuration, not a directory they would fail on."""

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
    real = _Resolver()
    resolved_roots = tuple(_real(root) for root in roots)
    root_names = [str(root) for root in resolved_roots]
    home = str(_home(environ))
    config, data = str(config_dir(environ)), str(data_dir(environ))
    own_settings = [real(f"{config}/settings.json"), real(f"{config}/projects")]
    own_settings += [str(_real(path)) for path in settings_files]
    named = [(config, real(config), False), (data, real(data), False)]
    for place, is_file in _startup_places(home, environ):
        resolved = real(place)
        # A place the user opened as the project (`~/.config/nvim`, `~/bin`, a dotfiles checkout
        # at `~/.oh-my-zsh`) is the work itself: protecting it would make every edit ask.
        if not any(_within_text(root, resolved) for root in root_names):
            named.append((place, resolved, is_file))
    credentials = [
        (f"{home}/{name.rstrip('/')}", not name.endswith("/")) for name in CREDENTIAL_PATHS
    ]
    secrets = [real(path) for path, _ in credentials] + own_settings
    concrete = [*(resolved for _, resolved, _ in named), *secrets]
    lexical = [os.path.abspath(path) for path, *_ in (*named, *credentials)]
    files = [resolved for _, resolved, is_file in named if is_file]
    files += [
        resolved for (_, is_file), resolved in zip(credentials, secrets, strict=False) if is_file
    ]
    files.append(own_settings[0])
    for root in root_names:
        for name in sorted(PROTECTED_DIR_NAMES):
            concrete.append(f"{root.rstrip('/')}/{name}")
            lexical.append(f"{root.rstrip('/')}/{name}")
        target = _git_pointer_target(Path(root) / ".git")
        if target is not None:
            concrete.append(str(target))
            lexical.append(str(target))
    return ProtectedPaths(
        roots=resolved_roots,
        paths=_outermost(concrete),
        secrets=tuple(map(Path, dict.fromkeys(secrets))),
        lexical=_outermost(lexical),
        hidden=_outermost([named[0][1], named[1][1]]),
        files=frozenset(map(Path, files)),
    )


def _startup_places(home: str, environ: Mapping[str, str]) -> list[tuple[str, bool]]:
    """The shell start-up files and autostart places of the user, as named (not resolved), each
    with whether it is a file."""
    names = (*SHELL_STARTUP_FILES, *AUTOSTART_PATHS)
    places = [(f"{home}/{name.rstrip('/')}", not name.endswith("/")) for name in names]
    for variable in SHELL_VARIABLES:
        directory = environ.get(variable, "")
        if os.path.isabs(directory):
            places += [
                (f"{directory}/{name}", True) for name in SHELL_STARTUP_FILES if "/" not in name
            ]
    for variable in SHELL_FILE_VARIABLES:
        file = environ.get(variable, "")
        if os.path.isabs(file):
            places.append((file, True))
    return places


def _within_text(path: str, root: str) -> bool:
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


def _outermost(paths: Iterable[str]) -> tuple[Path, ...]:
    """`paths` without those below another of them (already covered; and the sandbox cannot make
    a mount point inside a directory it has made read-only)."""
    unique = list(dict.fromkeys(paths))
    kept = set(unique)

    def covered(text: str) -> bool:
        parent = os.path.dirname(text)
        while parent != text:
            if parent in kept:
                return True
            text, parent = parent, os.path.dirname(parent)
        return False

    return tuple(Path(path) for path in unique if not covered(path))
