"""The settings files, validated and merged: user, project, local and remembered scope.

    $XDG_CONFIG_HOME/earshot/settings.json                  user (default ~/.config)
    <cwd>/.earshot/settings.json                            project (checked in)
    <cwd>/.earshot/settings.local.json                      local (in the project directory)
    $XDG_CONFIG_HOME/earshot/projects/<name>-<hash>.json    remembered: your answers for <cwd>

Merge rules: `model`, `mode` and `cache` are taken from the most local scope that sets them
(then `EARSHOT_MODEL` overrides the model), and so is each key of `streamTimeouts` and `mcp`;
`providers`, `models` and `mcpServers` merge by key, the later scope replacing a whole entry;
permission rules and hooks are CONCATENATED, each remembering its scope, because a scope that
could shadow another would let a checked-in project file remove a deny rule the user set
globally.

Workspace trust (`agent.settings.trust`): the two files in the project directory are repository
content, whoever wrote them and whatever git says. What they would GRANT or RUN (`allow` rules,
`hooks`, `mcpServers`, a more permissive `mode`, a longer `cache`, provider definitions and a
model on another provider than yours: they decide where the conversation goes, and whatever would
weaken the command sandbox (`agent.settings.sandbox`)) is applied only when the user's
`trustedDirectories` cover the cwd; otherwise it is left out of the merged `Settings` and listed
in `Settings.ignored`. Deny and ask rules apply from every scope. The user file and the
remembered file live in the user's own config directory, which nothing in a project can write
(it is a protected path): they always apply. "Always allow" and "always reject" answers are
written to the remembered file (`remember_rule`), keyed by the resolved cwd, so they work in an
untrusted directory too. `trustedDirectories` is read from the user file only.

A checked-in project file is also not allowed to point a built-in provider at another URL, or to
read a built-in provider's key variable for a provider of its own: either would send the user's
key wherever the repository says.

The file schema and its validator live in `agent.settings.schema` (by hand, not pydantic: this
module is on the editor's start-up path); the names are re-exported here. Nothing in this module
echoes an API key: `apiKey` is a `Secret`, and errors carry key paths and problems, never values
from the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias, cast

from agent.context import CACHE_SETTINGS, DEFAULT_CACHE, CacheSetting
from agent.settings.code import CodeConfig, merge_code
from agent.settings.sandbox import SandboxConfig, merge_sandbox
from agent.settings.schema import (
    HOOK_EVENTS,
    CostSettings,
    HookEvent,
    HookSettings,
    HooksSettings,
    HttpServerSettings,
    InvalidSettings,
    McpServerSettings,
    McpSettings,
    ModelSettings,
    PermissionSettings,
    ProviderSettings,
    SandboxSettings,
    Secret,
    SettingsFile,
    StdioServerSettings,
    StreamTimeoutSettings,
)
from agent.settings.trust import (
    MODE_ORDER,
    TRUSTED_DIRECTORIES_KEY,
    IgnoredSettings,
    is_trusted,
    project_skills,
    remembered_file_name,
)
from providers.records import Record

if TYPE_CHECKING:
    from agent.modes import Mode
    from providers.catalog import ModelOverride
    from providers.registry import UserProviderConfig

Scope: TypeAlias = Literal["user", "project", "local", "remembered"]
SCOPES: tuple[Scope, ...] = ("user", "project", "local", "remembered")
REPOSITORY_SCOPES: frozenset[Scope] = frozenset({"project", "local"})
"""The files in the project directory: they grant and run nothing until the user trusts it."""
PermissionList: TypeAlias = Literal["allow", "ask", "deny"]

__all__ = [
    "DEFAULT_MODE",
    "HOOK_EVENTS",
    "MODEL_ENV",
    "REPOSITORY_SCOPES",
    "SCOPES",
    "CostSettings",
    "HookEvent",
    "HookRule",
    "HookSettings",
    "HooksSettings",
    "HttpServerSettings",
    "InvalidSettings",
    "McpServerSettings",
    "McpSettings",
    "ModelSettings",
    "PermissionList",
    "PermissionRule",
    "PermissionSettings",
    "ProviderSettings",
    "SandboxConfig",
    "SandboxSettings",
    "Scope",
    "Secret",
    "Settings",
    "SettingsError",
    "SettingsFile",
    "StdioServerSettings",
    "StreamTimeoutSettings",
    "load_settings",
    "read_settings_file",
    "settings_paths",
]

MODEL_ENV = "EARSHOT_MODEL"
DEFAULT_MODE: Mode = "ask"


class SettingsError(Exception):
    """A settings file is unreadable or invalid. The message names the file, the key path and
    the problem, and never contains a value from the file."""


# ---------------------------------------------------------------------------- merged values


class PermissionRule(Record):
    """One permission rule and where it came from."""

    list_name: PermissionList
    rule: str
    """`Tool` or `Tool(pattern)`, as written."""
    scope: Scope
    source: Path


class HookRule(Record):
    """One hook command and where it came from."""

    event: HookEvent
    command: str
    matcher: str | None
    timeout: float | None
    scope: Scope
    source: Path


class Settings(Record):
    """All scopes merged."""

    model: str | None = None
    """`provider/model`; None when no scope (and no `EARSHOT_MODEL`) names one."""
    mode: Mode = DEFAULT_MODE
    providers: Mapping[str, ProviderSettings] = field(default_factory=lambda: {})
    models: Mapping[str, ModelSettings] = field(default_factory=lambda: {})
    permission_rules: tuple[PermissionRule, ...] = ()
    """user rules first, then project, then local; order within a file kept."""
    mcp_servers: Mapping[str, McpServerSettings] = field(default_factory=lambda: {})
    mcp_server_scopes: Mapping[str, Scope] = field(default_factory=lambda: {})
    """Which scope each MCP server entry came from (project servers may need the user's trust)."""
    hooks: tuple[HookRule, ...] = ()
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    """The command sandbox (`agent.settings.sandbox`: an untrusted repository can only tighten
    it)."""
    sources: tuple[Path, ...] = ()
    """The files that were read, user scope first."""
    ignored: IgnoredSettings = field(default_factory=IgnoredSettings)
    """What untrusted repository settings asked for and did not get (falsy when nothing)."""
    trusted: bool = False
    """The user trusts the cwd: repository settings and skills apply in full."""
    remembered: Path | None = None
    """The user's own file for this cwd, where "always" answers are saved (`remember_rule`)."""
    stream_timeouts: StreamTimeoutSettings = field(default_factory=StreamTimeoutSettings)
    """`streamTimeouts`, each key from the most local scope that sets it (None: the default)."""
    mcp: McpSettings = field(default_factory=McpSettings)
    """`mcp` (how long MCP servers are waited for), each key from the most local scope."""
    code: CodeConfig = field(default_factory=CodeConfig)
    """`verify`, `lsp` and `repoMap` (`agent.settings.code`: a repository's commands and
    servers only when trusted)."""
    cache: CacheSetting = DEFAULT_CACHE
    """`cache`: the prompt-cache lifetime asked of providers, or `off` (`agent.context.caching`);
    from the most local scope, except that an untrusted repository can only lower it."""

    def rules(self, list_name: PermissionList) -> list[str]:
        """The rule strings of one list, all scopes."""
        return [rule.rule for rule in self.permission_rules if rule.list_name == list_name]

    def hooks_for(self, event: HookEvent) -> list[HookRule]:
        return [hook for hook in self.hooks if hook.event == event]

    def user_providers(self) -> dict[str, UserProviderConfig]:
        """`providers.*` in the form `providers.registry.resolve_endpoint` takes."""
        from providers.registry import UserProviderConfig

        return {
            provider_id: UserProviderConfig(
                api=entry.api,
                base_url=entry.base_url,
                api_key_env=entry.api_key_env,
                api_key=entry.api_key.get_secret_value() if entry.api_key is not None else None,
                headers=dict(entry.headers),
                script=entry.script,
                first_event_timeout=entry.stream_timeouts.first_event
                if entry.stream_timeouts
                else None,
                idle_timeout=entry.stream_timeouts.idle if entry.stream_timeouts else None,
            )
            for provider_id, entry in self.providers.items()
        }

    def model_overrides(self) -> dict[str, ModelOverride]:
        """`models.*` in the form `providers.catalog.ModelCatalog.load` takes."""
        return {name: _override(entry) for name, entry in self.models.items()}


def _override(entry: ModelSettings) -> ModelOverride:
    # Imported here, like the registry above: neither is needed to read the files.
    from providers.catalog import Cost, ModelOverride

    cost = None
    if entry.cost is not None:
        cost = Cost(
            input=entry.cost.input,
            output=entry.cost.output,
            cache_read=entry.cost.cache_read,
            cache_write=entry.cost.cache_write,
        )
    return ModelOverride(
        name=entry.name,
        context_window=entry.context_window,
        max_output=entry.max_output,
        vision=entry.vision,
        reasoning=entry.reasoning,
        tool_call=entry.tool_call,
        cost=cost,
    )


# ---------------------------------------------------------------------------- loading


def settings_paths(
    cwd: Path, *, environ: Mapping[str, str] | None = None, config_home: Path | None = None
) -> dict[Scope, Path]:
    """Where each scope's file lives (whether or not it exists)."""
    environ = os.environ if environ is None else environ
    if config_home is None:
        xdg = environ.get("XDG_CONFIG_HOME")
        config_home = Path(xdg) if xdg else Path(environ.get("HOME") or Path.home()) / ".config"
    return {
        "user": config_home / "earshot" / "settings.json",
        "project": cwd / ".earshot" / "settings.json",
        "local": cwd / ".earshot" / "settings.local.json",
        "remembered": config_home / "earshot" / "projects" / remembered_file_name(cwd),
    }


def read_settings_file(path: Path, scope: Scope) -> SettingsFile | None:
    """Parse and validate one file; None when it does not exist.

    Raises:
        SettingsError: unreadable, not JSON, or not valid settings.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"{path}: cannot read settings ({type(error).__name__})") from None
    if not text.strip():
        return SettingsFile()
    try:
        data: object = json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingsError(
            f"{path}: not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: settings must be a JSON object")
    try:
        parsed = SettingsFile.model_validate(cast("dict[str, object]", data))
    except InvalidSettings as error:
        raise SettingsError(f"{path}: invalid settings: {_printable(str(error))}") from None
    _check_rules(path, parsed)
    _check_trusted_directories(path, scope, parsed)
    if scope == "project":
        _check_project_providers(path, parsed)
    return parsed


def _printable(text: str) -> str:
    """An error naming the file's keys, with a key's newline, escape sequence or bidi control
    written as a JSON escape (`\\n`, `\\u001b`, `\\u202e`): it is shown on a terminal and in
    an editor, and must not forge a line or move the text."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else json.dumps(char)[1:-1] for char in text)


def _check_trusted_directories(path: Path, scope: Scope, parsed: SettingsFile) -> None:
    if parsed.trusted_directories and scope != "user":
        # A repository must not be able to vouch for itself.
        raise SettingsError(
            f"{path}: {TRUSTED_DIRECTORIES_KEY}: only read from your user settings; use "
            "`earshot trust` instead"
        )
    for index, entry in enumerate(parsed.trusted_directories):
        if not Path(entry).expanduser().is_absolute():
            raise SettingsError(
                f"{path}: {TRUSTED_DIRECTORIES_KEY}.{index}: must be an absolute path"
            )


def _check_rules(path: Path, parsed: SettingsFile) -> None:
    for list_name in ("allow", "ask", "deny"):
        for index, rule in enumerate(cast("list[str]", getattr(parsed.permissions, list_name))):
            if not is_rule(rule):
                raise SettingsError(
                    f"{path}: permissions.{list_name}.{index}: a rule is 'Tool' or "
                    f"'Tool(pattern)', got {rule!r}"
                )


def is_rule(rule: str) -> bool:
    """Whether `rule` is `Tool` or `Tool(pattern)`."""
    name, paren, rest = rule.strip().partition("(")
    if not name or not all(char.isalnum() or char in "_-." for char in name):
        return False
    return not paren or (rest.endswith(")") and len(rest) > 1)


def _check_project_providers(path: Path, parsed: SettingsFile) -> None:
    if not parsed.providers:
        return  # without importing the registry (~3 ms), for the common project file
    from providers.registry import all_providers, provider_spec

    builtin_keys = {variable for spec in all_providers() for variable in spec.env}
    for provider_id, entry in parsed.providers.items():
        if provider_spec(provider_id) is not None and entry.base_url is not None:
            raise SettingsError(
                f"{path}: providers.{provider_id}.baseUrl: a project settings file cannot "
                f"redirect the built-in provider '{provider_id}' (its key would follow); set it "
                "in settings.local.json or your user settings"
            )
        if entry.api_key_env in builtin_keys:
            raise SettingsError(
                f"{path}: providers.{provider_id}.apiKeyEnv: a project settings file cannot send "
                f"{entry.api_key_env} to a provider it defines; set it in settings.local.json or "
                "your user settings"
            )


def load_settings(
    cwd: Path,
    *,
    environ: Mapping[str, str] | None = None,
    config_home: Path | None = None,
) -> Settings:
    """Read and merge the user, project and local settings files for a session in `cwd`, leaving
    out what untrusted repository content would grant or run (see `agent.settings.trust`).

    Args:
        cwd: the session's working directory (its `.earshot/` holds project and local files).
        environ: for `EARSHOT_MODEL`, `XDG_CONFIG_HOME` and `HOME`.
        config_home: the XDG config directory (the user file is `<config_home>/earshot/...`).

    Raises:
        SettingsError: a file is unreadable or invalid.
    """
    environ = os.environ if environ is None else environ
    paths = settings_paths(cwd, environ=environ, config_home=config_home)
    files = {scope: read_settings_file(paths[scope], scope) for scope in SCOPES}
    user = files["user"]
    trusted_dirs = [Path(entry) for entry in user.trusted_directories] if user else []
    workspace_trusted = is_trusted(cwd, trusted_dirs)
    merged = _Merge(home=Path(environ.get("HOME") or Path.home()))
    for scope in SCOPES:
        parsed = files[scope]
        if parsed is None:
            continue
        grants = scope not in REPOSITORY_SCOPES or workspace_trusted
        merged.add(scope, paths[scope], parsed, cwd=cwd, grants=grants)
    if not workspace_trusted:
        skills = project_skills(cwd)
        if skills:
            merged.ignore_skills(cwd / ".earshot" / "skills", skills)
    model = environ.get(MODEL_ENV, "").strip() or merged.model
    return Settings(
        model=model,
        mode=merged.mode or DEFAULT_MODE,
        providers=merged.providers,
        models=merged.models,
        permission_rules=tuple(merged.rules),
        mcp_servers=merged.servers,
        mcp_server_scopes=merged.server_scopes,
        hooks=tuple(merged.hooks),
        sandbox=merged.sandbox,
        sources=tuple(merged.sources),
        ignored=merged.ignored,
        trusted=workspace_trusted,
        remembered=paths["remembered"],
        stream_timeouts=merged.stream_timeouts,
        mcp=merged.mcp,
        code=merged.code,
        cache=merged.cache or DEFAULT_CACHE,
    )


class _Merge:
    """The scopes merged so far, and what was left out because its file may not grant.

    A plain class rather than a dataclass: it is a private accumulator, and each dataclass costs
    a few tenths of a millisecond to define on the editor's start-up path."""

    def __init__(self, *, home: Path) -> None:
        self.home = home
        self.model: str | None = None
        self.mode: Mode | None = None
        self.providers: dict[str, ProviderSettings] = {}
        self.models: dict[str, ModelSettings] = {}
        self.servers: dict[str, McpServerSettings] = {}
        self.server_scopes: dict[str, Scope] = {}
        self.rules: list[PermissionRule] = []
        self.hooks: list[HookRule] = []
        self.sandbox = SandboxConfig()
        self.sources: list[Path] = []
        self.ignored = IgnoredSettings()
        self.stream_timeouts = StreamTimeoutSettings()
        self.mcp = McpSettings()
        self.code = CodeConfig()
        self.cache: CacheSetting | None = None

    def add(
        self, scope: Scope, path: Path, parsed: SettingsFile, *, cwd: Path, grants: bool
    ) -> None:
        """Merge one file; `grants` False keeps only what restricts, and records the rest."""
        self.sources.append(path)
        if parsed.model and not grants and not self._same_provider(parsed.model):
            # Another provider than the one the user chose (or one this file defines, ignored
            # below): the repository would decide where the conversation is sent.
            self._ignore(path, model=parsed.model)
        else:
            self.model = parsed.model or self.model
        if parsed.mode is not None:
            current = self.mode or DEFAULT_MODE
            if grants or MODE_ORDER[parsed.mode] <= MODE_ORDER[current]:
                self.mode = parsed.mode
            else:
                self._ignore(path, mode=parsed.mode)
        base = cwd if scope != "user" else path.parent
        for provider_id, entry in parsed.providers.items():
            # A provider entry decides where the conversation (and maybe a key read from the
            # environment) is sent, so a repository may not define one until it is trusted.
            if grants:
                self.providers[provider_id] = _anchor_script(entry, base)
            else:
                self._ignore(path, providers=(provider_id,))
        self.models.update(parsed.models)
        if parsed.stream_timeouts is not None:
            # Not a grant (a timeout runs nothing and sends nothing anywhere): every scope.
            self.stream_timeouts = StreamTimeoutSettings(
                first_event=parsed.stream_timeouts.first_event or self.stream_timeouts.first_event,
                idle=parsed.stream_timeouts.idle or self.stream_timeouts.idle,
            )
        if parsed.mcp is not None:  # waits, not grants: every scope
            old, new = self.mcp, parsed.mcp
            self.mcp = McpSettings(
                startup_wait=old.startup_wait if new.startup_wait is None else new.startup_wait,
                startup_timeout=new.startup_timeout or old.startup_timeout,
                tool_timeout=new.tool_timeout or old.tool_timeout,
            )
        if grants:
            self.servers.update(parsed.mcp_servers)
            self.server_scopes.update(dict.fromkeys(parsed.mcp_servers, scope))
        elif parsed.mcp_servers:
            self._ignore(path, mcp_servers=tuple(parsed.mcp_servers))
        for list_name in ("allow", "ask", "deny"):
            texts = cast("list[str]", getattr(parsed.permissions, list_name))
            if list_name == "allow" and not grants:
                if texts:
                    self._ignore(path, allow=tuple(texts))
                continue
            self.rules.extend(
                PermissionRule(list_name=list_name, rule=rule, scope=scope, source=path)
                for rule in texts
            )
        hooks = [
            HookRule(
                event=event,
                command=hook.command,
                matcher=hook.matcher,
                timeout=hook.timeout,
                scope=scope,
                source=path,
            )
            for event in HOOK_EVENTS
            for hook in cast("list[HookSettings]", getattr(parsed.hooks, event))
        ]
        if grants:
            self.hooks.extend(hooks)
        elif hooks:
            self._ignore(path, hooks=tuple(f"{hook.event}: {hook.command}" for hook in hooks))
        self.sandbox, weakened = merge_sandbox(
            self.sandbox, parsed.sandbox, grants=grants, home=self.home
        )
        if weakened:
            self._ignore(path, sandbox=weakened)
        self.code, verify, lsp = merge_code(self.code, parsed, grants=grants)
        if verify or lsp:
            self._ignore(path, verify=verify, lsp=lsp)
        if parsed.cache is not None:
            # A repository may keep less with the vendor, never more: longer caching (OpenAI's
            # 24-hour retention, Anthropic's hour) keeps the user's prompts longer.
            current = self.cache or DEFAULT_CACHE
            if grants or CACHE_SETTINGS.index(parsed.cache) <= CACHE_SETTINGS.index(current):
                self.cache = parsed.cache
            else:
                self._ignore(path, cache=parsed.cache)

    def _same_provider(self, model: str) -> bool:
        """Whether `model` runs on the provider of the model the user's own scopes chose."""
        if self.model is None:
            return False
        return model.split("/", 1)[0] == self.model.split("/", 1)[0]

    def ignore_skills(self, directory: Path, names: tuple[str, ...]) -> None:
        old = self.ignored
        self.ignored = replace(
            old,
            skills=old.skills + names,
            sources=old.sources if directory in old.sources else (*old.sources, directory),
        )

    def _ignore(
        self,
        path: Path,
        *,
        allow: tuple[str, ...] = (),
        hooks: tuple[str, ...] = (),
        mcp_servers: tuple[str, ...] = (),
        providers: tuple[str, ...] = (),
        mode: Mode | None = None,
        model: str | None = None,
        sandbox: tuple[str, ...] = (),
        verify: tuple[str, ...] = (),
        lsp: tuple[str, ...] = (),
        cache: CacheSetting | None = None,
    ) -> None:
        old = self.ignored
        self.ignored = replace(
            old,
            allow=old.allow + allow,
            hooks=old.hooks + hooks,
            mcp_servers=old.mcp_servers + mcp_servers,
            providers=old.providers + providers,
            mode=mode or old.mode,
            model=model or old.model,
            sandbox=old.sandbox + sandbox,
            verify=old.verify + verify,
            lsp=old.lsp + lsp,
            cache=cache or old.cache,
            sources=old.sources if path in old.sources else (*old.sources, path),
        )


def _anchor_script(entry: ProviderSettings, base: Path) -> ProviderSettings:
    if entry.script is None or Path(entry.script).expanduser().is_absolute():
        return entry
    return replace(entry, script=str(base / entry.script))
