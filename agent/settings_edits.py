"""The changes earshot makes to a user's settings files: "always" answers added to the remembered
file for a project, and directories trusted or no longer trusted (`earshot trust`). Each rewrite
keeps what it does not touch, and leaves a file that is not valid settings as it is."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from agent.settings import (
    PermissionList,
    Scope,
    SettingsError,
    is_rule,
    read_settings_file,
    settings_paths,
)
from agent.trust import TRUSTED_DIRECTORIES_KEY, resolve_directory


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

    _rewrite(path, "remembered", add)


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


def _rewrite(path: Path, scope: Scope, edit: Callable[[dict[str, Any]], None]) -> None:
    """Apply `edit` to a settings file's JSON, keeping what it does not touch; an invalid file
    raises `SettingsError` and is left as it is rather than overwritten."""
    if read_settings_file(path, scope) is None or not path.read_text(encoding="utf-8").strip():
        data: dict[str, Any] = {}
    else:
        data = cast("dict[str, Any]", json.loads(path.read_text(encoding="utf-8")))
    edit(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(path)
