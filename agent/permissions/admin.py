"""`/permissions`: what the user has granted, visible and changeable where they work.

    /permissions                       the rules in force, grouped by scope, with their files
    /permissions revoke RULE           remove a session grant, or the rule from the user's file
    /permissions allow|deny|ask RULE   add a rule to the user's remembered file for the project

Scopes, in the order shown: `session` (answers "allow for this session", in memory only),
`remembered` (the user's own file for this project, `$XDG_CONFIG_HOME/earshot/projects/
<dir>-<hash>.json`: "always" answers, and rules added here), `local` and `project` (the two files
in `.earshot/`: repository content, marked `trusted` or `ignored` for what they would grant),
`user` (`$XDG_CONFIG_HOME/earshot/settings.json`), and `builtin` (the protections of
`agent.protected_paths`, which no rule lifts).

Which files this edits, and why: only the user's own, which no project can write (a protected
path). `revoke` removes a rule from the user file or the remembered file, and never from a file
in the project directory: that is the repository's (`agent.settings.trust`: earshot cannot tell who
wrote it), so it says where the rule is and leaves it. `allow|deny|ask` write to the remembered
file, not to `.earshot/settings.local.json`: an allow rule there would be ignored until the
workspace is trusted, and the file could be committed; the remembered file is the user's "local"
settings for the project, applied trusted or not.

After an edit (and before each listing) the settings files are read again and their rules
replace the gate's (its `RuleBook`, which only the session and this command hold), so the next
call is decided by the files as they now are. The listing also goes out as structured data
(`PermissionsReport.data`, JSON-valued), for a client to render.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from agent.permissions.gate import PermissionGate, RuleBook
from agent.permissions.rules import PermissionRules, parse_rule, parse_rule_list
from agent.protected_paths import PROTECTED_DIR_NAMES
from agent.settings import (
    REPOSITORY_SCOPES,
    PermissionList,
    Scope,
    Settings,
    SettingsError,
    append_rule,
    load_settings,
    read_settings_file,
    remove_rule,
)

LISTS: tuple[PermissionList, ...] = ("allow", "ask", "deny")
OWN_SCOPES: frozenset[Scope] = frozenset({"user", "remembered"})
"""The files `/permissions` edits: the user's own."""
_SHOWN_ORDER: tuple[Scope, ...] = ("remembered", "local", "project", "user")
JsonValue = object


@dataclass(frozen=True, slots=True)
class PermissionsReport:
    """What one `/permissions` command says: text for the user, and data for a client."""

    text: str
    data: Mapping[str, JsonValue] = field(default_factory=lambda: {})


class PermissionAdmin:
    """Lists and edits the permission rules of one session (see the module docstring)."""

    def __init__(
        self,
        *,
        cwd: Path,
        settings: Settings | None,
        gate: PermissionGate,
        book: RuleBook | None,
        reload: Callable[[], Settings] | None = None,
    ) -> None:
        self._cwd = cwd
        self._settings = settings
        self._gate = gate
        self._book = book
        self._reload = reload if reload is not None else settings_reloader(cwd, settings)

    @property
    def book(self) -> RuleBook | None:
        """The gate's file rules (a command's `allowed_tools` narrow a turn through it)."""
        return self._book

    def run(self, argument: str) -> PermissionsReport:
        """Run `/permissions ARGUMENT`."""
        verb, _, rest = argument.strip().partition(" ")
        rule = rest.strip()
        match verb:
            case "" | "list":
                return self.listing()
            case "revoke":
                return self.revoke(rule)
            case "allow" | "deny" | "ask":
                return self.add(verb, rule)
            case _:
                return PermissionsReport(
                    f"Unknown `/permissions {verb}`: use `/permissions`, `/permissions revoke "
                    "RULE` or `/permissions allow|deny|ask RULE`."
                )

    # ------------------------------------------------------------------------- listing

    def listing(self, note: str = "") -> PermissionsReport:
        problem = self._refresh()
        scopes = [self._session_scope(), *self._file_scopes(), _builtin_scope(self._gate)]
        lines = [note, ""] if note else []
        if problem:
            lines += [f"Could not read the settings again ({problem}); shown as last read.", ""]
        lines += _describe(scopes)
        return PermissionsReport("\n".join(lines).strip(), {"scopes": scopes})

    def _session_scope(self) -> dict[str, JsonValue]:
        rules = [
            {"list": list_name, "rule": str(rule), "applied": True, "revocable": True}
            for list_name, rule in self._gate.answered_rules()
            if rule.source == "session"
        ]
        return {"scope": "session", "file": None, "rules": rules}

    def _file_scopes(self) -> list[dict[str, JsonValue]]:
        settings = self._settings
        if settings is None:
            return []
        paths = scope_paths(settings, self._cwd)
        shown: list[dict[str, JsonValue]] = []
        for scope in _SHOWN_ORDER:
            path = paths.get(scope)
            if path is None:
                continue
            rules = [
                _rule_entry(entry.list_name, entry.rule, applied=True, scope=scope)
                for entry in settings.permission_rules
                if entry.scope == scope
            ]
            entry: dict[str, JsonValue] = {"scope": scope, "file": str(path), "rules": rules}
            if scope in REPOSITORY_SCOPES:
                entry["trusted"] = settings.trusted
                if not settings.trusted:
                    rules += [
                        _rule_entry("allow", text, applied=False, scope=scope)
                        for text in _file_rules(path, scope, "allow")
                    ]
            if scope == "remembered":
                entry["modified"] = _modified(path)
                answered = _answered_at(path)
                for rule in rules:
                    when = answered.get(f"{rule['list']}:{rule['rule']}")
                    if when is not None:
                        rule["answeredAt"] = when
            if rules or path.exists():
                shown.append(entry)
        return shown

    # ------------------------------------------------------------------------- editing

    def revoke(self, text: str) -> PermissionsReport:
        """`/permissions revoke RULES`: the rules as a prompt's option or the listing showed
        them (`parse_rule_list`: several at once, commas or code spans)."""
        if not text:
            return PermissionsReport("Say which rule: `/permissions revoke Bash(npm test *)`.")
        try:
            wanted = [str(rule) for rule in parse_rule_list(text)]
        except ValueError as error:
            return PermissionsReport(f"Not a permission rule: {error}")
        lines: list[str] = []
        for rule in wanted:
            said = self._revoke(rule)
            if isinstance(said, PermissionsReport):
                return said
            lines.extend(said)
        return self.listing("\n".join(lines))

    def _revoke(self, wanted: str) -> list[str] | PermissionsReport:
        def matches(rule: str) -> bool:
            try:
                return str(parse_rule(rule)) == wanted
            except ValueError:
                return False

        done: list[str] = []
        if self._gate.forget(wanted):
            done.append("this session's answers")
        settings = self._settings
        paths = scope_paths(settings, self._cwd) if settings is not None else {}
        for scope in ("remembered", "user"):
            path = paths.get(scope)
            if path is None:
                continue
            try:
                removed = remove_rule(path, scope, matches)
            except SettingsError as error:
                return self.listing(f"Could not edit {path}: {error}")
            if removed:
                done.append(f"{path} ({', '.join(item.split(':', 1)[0] for item in removed)})")
        kept = [
            f"{paths[scope]}"
            for scope in ("local", "project")
            if scope in paths and any(matches(r) for r in _all_file_rules(paths[scope], scope))
        ]
        lines: list[str] = []
        if done:
            lines.append(f"Revoked {_code(wanted)} from {'; '.join(done)}.")
        if kept:
            lines.append(
                f"{_code(wanted)} is also in {', '.join(kept)}: a file in the project directory "
                "is the repository's, and earshot does not edit it. Remove it there yourself."
            )
        if not lines:
            lines.append(f"No rule {_code(wanted)} is in force for this session.")
        return lines

    def add(self, list_name: PermissionList, text: str) -> PermissionsReport:
        """`/permissions allow|deny|ask RULES` (several at once, as `revoke` takes them)."""
        if not text:
            return PermissionsReport(
                f"Say which rule: `/permissions {list_name} Bash(npm test *)`."
            )
        try:
            rules = [str(rule) for rule in parse_rule_list(text)]
        except ValueError as error:
            return PermissionsReport(f"Not a permission rule: {error}")
        settings = self._settings
        if settings is None or settings.remembered is None:
            return PermissionsReport("This session has no settings file to add a rule to.")
        for rule in rules:
            try:
                append_rule(settings.remembered, list_name, rule)
            except (SettingsError, OSError) as error:
                return PermissionsReport(f"Could not add {_code(rule)}: {error}")
        shown = ", ".join(_code(rule) for rule in rules)
        return self.listing(f"Added {shown} to {list_name} in {_code(str(settings.remembered))}.")

    def _refresh(self) -> str:
        """Read the settings files again and apply their rules; a problem, or ""."""
        try:
            settings = self._reload()
            rules = PermissionRules.from_settings(settings)
        except (SettingsError, ValueError) as error:
            return str(error)
        self._settings = settings
        if self._book is not None:
            self._book.rules = rules
        return ""


def settings_reloader(cwd: Path, settings: Settings | None) -> Callable[[], Settings]:
    """Reads the settings of `cwd` again, from the config home `settings` were read from."""
    # The remembered file is `<config home>/earshot/projects/<name>.json`: the session's
    # settings were read from that config home, whatever the environment says now.
    remembered = settings.remembered if settings is not None else None
    config_home = remembered.parent.parent.parent if remembered is not None else None

    def reload() -> Settings:
        if settings is None:
            raise SettingsError("this session was started without settings")
        return load_settings(cwd, config_home=config_home)

    return reload


def scope_paths(settings: Settings, cwd: Path) -> dict[Scope, Path]:
    """The settings files of each scope a session of `cwd` reads its rules from."""
    paths: dict[Scope, Path] = {
        "project": cwd / ".earshot" / "settings.json",
        "local": cwd / ".earshot" / "settings.local.json",
    }
    if settings.remembered is not None:
        paths["remembered"] = settings.remembered
        paths["user"] = settings.remembered.parent.parent / "settings.json"
    return paths


def _rule_entry(
    list_name: PermissionList, rule: str, *, applied: bool, scope: Scope
) -> dict[str, JsonValue]:
    return {
        "list": list_name,
        "rule": rule,
        "applied": applied,
        "revocable": scope in OWN_SCOPES,
    }


def _file_rules(path: Path, scope: Scope, list_name: PermissionList) -> list[str]:
    try:
        parsed = read_settings_file(path, scope)
    except SettingsError:
        return []
    if parsed is None:
        return []
    return list(cast("list[str]", getattr(parsed.permissions, list_name)))


def _all_file_rules(path: Path, scope: Scope) -> list[str]:
    return [rule for list_name in LISTS for rule in _file_rules(path, scope, list_name)]


def _answered_at(path: Path) -> dict[str, str]:
    try:
        parsed = read_settings_file(path, "remembered")
    except SettingsError:
        return {}
    return dict(parsed.answered_at) if parsed is not None else {}


def _modified(path: Path) -> str | None:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return None
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).isoformat(timespec="seconds")


def _builtin_scope(gate: PermissionGate) -> dict[str, JsonValue]:
    protected = gate.protected
    return {
        "scope": "builtin",
        "file": None,
        "rules": [],
        "protectedNames": sorted(PROTECTED_DIR_NAMES),
        "protectedPaths": [str(path) for path in protected.paths],
        "secretPaths": [str(path) for path in protected.secrets],
    }


_TITLES: Mapping[str, str] = {
    "session": "Session grants (this session only)",
    "remembered": "Remembered answers (your file for this project)",
    "local": "Local (.earshot/settings.local.json)",
    "project": "Project (.earshot/settings.json)",
    "user": "User settings",
}


def _describe(scopes: Sequence[Mapping[str, JsonValue]]) -> list[str]:
    """The listing as Markdown: a bold title per scope, its rules as list items (a Markdown
    client would run plain lines together into one paragraph)."""
    lines: list[str] = []
    for scope in scopes:
        name = cast("str", scope["scope"])
        if name == "builtin":
            lines += _describe_builtin(scope)
            continue
        title = _TITLES.get(name, name)
        if "trusted" in scope:
            title += ": trusted" if scope["trusted"] else ": NOT trusted (allow rules ignored)"
        heading = f"**{title}**"
        if scope.get("file"):
            heading += f" — {_code(str(scope['file']))}"
        if scope.get("modified"):
            heading += f", last answer saved {scope['modified']}"
        lines += [heading, ""]
        rules = cast("list[Mapping[str, JsonValue]]", scope["rules"])
        if not rules:
            lines.append("- (none)")
        for rule in rules:
            state = "" if rule["applied"] else " (ignored: the workspace is not trusted)"
            when = f" (answered {rule['answeredAt']})" if rule.get("answeredAt") else ""
            lines.append(f"- {rule['list']}: {_code(str(rule['rule']))}{state}{when}")
        lines.append("")
    return lines


def _describe_builtin(scope: Mapping[str, JsonValue]) -> list[str]:
    names = ", ".join(_code(name) for name in cast("list[str]", scope["protectedNames"]))
    paths = cast("list[str]", scope["protectedPaths"])
    secrets = cast("list[str]", scope["secretPaths"])
    return [
        "**Built-in protections** (no rule or answer lifts them)",
        "",
        f"- writes ask: {names} anywhere in the project; {len(paths)} protected places "
        "(earshot's settings and data, shell start-up files...)",
        f"- reads refused: {len(secrets)} credential places (~/.ssh, ~/.aws...) and "
        "earshot's settings, unless a rule names them",
    ]


def _code(text: str) -> str:
    """`text` as a Markdown code span: fenced by more backticks than any run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


__all__ = [
    "LISTS",
    "OWN_SCOPES",
    "PermissionAdmin",
    "PermissionsReport",
    "scope_paths",
    "settings_reloader",
]
