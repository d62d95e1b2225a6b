"""The changes earshot makes to a user's settings files: "always" answers added to the remembered
file for a project, and directories trusted or no longer trusted (`earshot trust`). Each rewrite
keeps what it does not touch, and leaves a file that is not valid settings as it is.

Many sessions edit the same files (two threads answering "always" at once, `/permissions revoke`
in one window while another saves an answer, `providers/set` from a second editor), so an edit
is read, changed and written under an exclusive lock on the file (`edit_lock`: an `flock` on
`.<name>.lock` beside it, which threads of one process contend for too), and the new content
replaces the file atomically (a unique temporary name, renamed): no edit is lost, and a reader
(a session loading its settings) sees the old file or the new, never half of one.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import Any, cast

from agent.files import locked_sync
from agent.settings.scopes import (
    InvalidSettings,
    PermissionList,
    Scope,
    SettingsError,
    SettingsFile,
    is_rule,
    read_settings_file,
    settings_paths,
)
from agent.settings.trust import TRUSTED_DIRECTORIES_KEY, resolve_directory

EDIT_LOCK_WAIT = 10.0
"""Seconds an edit waits for another to finish with the file (each holds it for a moment)."""
ANSWERED_AT_KEY = "answeredAt"
"""In the remembered file: when each rule was added (`"<list>:<rule>"` -> ISO 8601 UTC)."""


def remember_rule(
    cwd: Path,
    list_name: PermissionList,
    rule: str,
    *,
    environ: Mapping[str, str] | None = None,
    config_home: Path | None = None,
) -> Path:
    """Add `rule` to `permissions.<list_name>` in the user's remembered file for `cwd` (an
    "always allow" or "always reject" answer), keeping the file's other content. Returns the
    file. A rule already present is not repeated.

    Raises:
        SettingsError: the rule is malformed, or the existing file is not valid settings (it is
            left untouched rather than overwritten).
    """
    path = settings_paths(cwd, environ=environ, config_home=config_home)["remembered"]
    append_rule(path, list_name, rule)
    return path


def append_rule(path: Path, list_name: PermissionList, rule: str) -> None:
    """Add `rule` to `permissions.<list_name>` of the remembered file at `path` (see
    `remember_rule`; `Settings.remembered` names the file a session uses).

    Raises:
        SettingsError: as `remember_rule`.
    """
    if not is_rule(rule):
        raise SettingsError(f"not a permission rule: {rule!r} (expected 'Tool' or 'Tool(pattern)')")

    def add(data: dict[str, Any]) -> None:
        permissions = cast("dict[str, Any]", data.setdefault("permissions", {}))
        rules = cast("list[str]", permissions.setdefault(list_name, []))
        if rule not in rules:
            rules.append(rule)
            answered = cast("dict[str, str]", data.setdefault(ANSWERED_AT_KEY, {}))
            answered[f"{list_name}:{rule}"] = datetime.datetime.now(datetime.UTC).isoformat(
                timespec="seconds"
            )

    _rewrite(path, "remembered", add)


def remove_rule(path: Path, scope: Scope, matches: Callable[[str], bool]) -> list[str]:
    """Remove every rule of `permissions.allow|ask|deny` in the file at `path` for which
    `matches(rule)` holds, keeping the file's other content; returns `list:rule` for each one
    removed (nothing is written when none matched). Only for the user's own files (user
    settings, the remembered file): `/permissions revoke` never edits a project file.

    Raises:
        SettingsError: the existing file is not valid settings (it is left untouched).
    """
    removed: list[str] = []

    def edit(data: dict[str, Any]) -> None:
        permissions = cast("dict[str, Any]", data.get("permissions", {}))
        for list_name in ("allow", "ask", "deny"):
            rules = cast("list[str]", permissions.get(list_name, []))
            kept = [rule for rule in rules if not matches(rule)]
            removed.extend(f"{list_name}:{rule}" for rule in rules if matches(rule))
            if list_name in permissions:
                permissions[list_name] = kept
        answered = cast("dict[str, str]", data.get(ANSWERED_AT_KEY, {}))
        for key in removed:
            answered.pop(key, None)

    if not path.exists():
        return removed
    _rewrite(path, scope, edit, unless_unchanged=True)
    return removed


def trusted_directories(
    *, environ: Mapping[str, str] | None = None, config_home: Path | None = None
) -> tuple[Path, ...]:
    """The user settings' `trustedDirectories`, as written.

    Raises:
        SettingsError: the user file is not valid settings.
    """
    path = settings_paths(Path(), environ=environ, config_home=config_home)["user"]
    parsed = read_settings_file(path, "user")
    return tuple(Path(entry) for entry in parsed.trusted_directories) if parsed else ()


def set_directory_trust(
    directory: Path,
    trusted: bool,
    *,
    environ: Mapping[str, str] | None = None,
    config_home: Path | None = None,
) -> tuple[Path, bool]:
    """Add `directory` (resolved) to the user settings' `trustedDirectories`, or remove it,
    keeping the file's other content. Returns the user file and whether anything changed.

    Raises:
        SettingsError: the existing user file is not valid settings (it is left untouched).
    """
    path = settings_paths(Path(), environ=environ, config_home=config_home)["user"]
    resolved = resolve_directory(directory)
    changed = False

    def edit(data: dict[str, Any]) -> None:
        nonlocal changed
        entries = cast("list[str]", data.get(TRUSTED_DIRECTORIES_KEY, []))
        kept = [entry for entry in entries if resolve_directory(entry) != resolved]
        if trusted:
            kept = entries if len(kept) < len(entries) else [*entries, str(resolved)]
        changed = kept != entries
        if kept:
            data[TRUSTED_DIRECTORIES_KEY] = kept
        else:
            data.pop(TRUSTED_DIRECTORIES_KEY, None)

    _rewrite(path, "user", edit)
    return path, changed


def rewrite_settings(
    path: Path, scope: Scope, edit: Callable[[dict[str, Any]], None], *, new_mode: int | None
) -> None:
    """Apply `edit` to a settings file's JSON, keeping what it does not touch and the file's
    permission bits (`new_mode` for a file created here).

    Raises:
        SettingsError: the existing file is not valid settings (it is left untouched), or the
            edited content is not.
    """
    _rewrite(path, scope, edit, new_mode=new_mode)


def _rewrite(
    path: Path,
    scope: Scope,
    edit: Callable[[dict[str, Any]], None],
    *,
    new_mode: int | None = None,
    unless_unchanged: bool = False,
) -> None:
    """Apply `edit` to a settings file's JSON, keeping what it does not touch, under the file's
    edit lock (read, edit and write: see the module docstring); an invalid file raises
    `SettingsError` and is left as it is rather than overwritten. With `unless_unchanged`,
    nothing is written when `edit` changed nothing."""
    with edit_lock(path):
        if read_settings_file(path, scope) is None or not path.read_text(encoding="utf-8").strip():
            data: dict[str, Any] = {}
        else:
            data = cast("dict[str, Any]", json.loads(path.read_text(encoding="utf-8")))
        original = json.dumps(data, sort_keys=True)
        edit(data)
        if unless_unchanged and json.dumps(data, sort_keys=True) == original:
            return
        try:
            SettingsFile.model_validate(data)
        except InvalidSettings as error:
            raise SettingsError(f"{path}: the edit would make it invalid: {error}") from None
        mode = None if path.exists() else new_mode
        write_private(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=mode)


@contextlib.contextmanager
def edit_lock(path: Path) -> Generator[None]:
    """Hold the edit lock of the settings file at `path` (creating its directory) for the block
    (`agent.files.lock.locked_sync` on `.<name>.lock` beside it).

    Raises:
        SettingsError: another edit held it for `EDIT_LOCK_WAIT` seconds.
        OSError: the lock file cannot be created.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked_sync(path.with_name(f".{path.name}.lock"), wait=EDIT_LOCK_WAIT) as held:
        if not held:
            raise SettingsError(f"{path} is being edited elsewhere; try again")
        yield


def write_private(path: Path, text: str, *, mode: int | None) -> None:
    """Replace `path` with `text` atomically. The new file keeps the old one's permission bits
    (a user file holding an `apiKey` stays 0600), or gets `mode` when given; it is created with
    them, so the text is never readable by others, not even for a moment. A new file without
    `mode` gets the umask's default."""
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = None
    # A name of its own: a writer that does not take the edit lock (an older earshot, a test)
    # must not share it.
    partial = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.partial")
    descriptor = os.open(
        partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode
    )
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            if mode is not None:
                os.fchmod(file.fileno(), mode)  # the umask may have narrowed it
            file.write(text)
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
