"""The settings file schema: one frozen dataclass per JSON object, and a validator driven by a
field table per class. It is the one validator of settings files (`agent.settings.scopes` reads
every scope through it).

Why not pydantic, the project's validation library: the settings are read on the way to every
`session/new` answer, whose budget is 10x a bare `python -c pass`, and pydantic alone would spend
most of it. Measured with `bench/settings_validation.py` (fresh processes, CPU time, median of
11, 2-core machine under load; the validation of one project file):

    python -c pass                                            26 ms  (1.0x)
    this module: import agent.settings.scopes + load the file        74 ms  (2.8x)
    the schema as pydantic models: import, define, validate  178 ms  (6.8x)

Defining the eleven `BaseModel` classes costs about as much as this whole module even when
pydantic is already imported and with `defer_build`; a `TypeAdapter` over these dataclasses
builds its schema at the first validation instead (55-80 ms). So the checks are written here:
strict, unknown keys rejected, JSON types matched exactly (`true` is not a number, `"5"` is not
an integer), and every problem in a file reported, not only the first.

A problem names the key path (`providers.x.baseUrl`, `permissions.allow.0`) and what is wrong
with it, and never the value: API keys and header tokens live in these files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Literal, Self, TypeAlias, cast

from agent.context import CACHE_SETTINGS, CacheSetting
from agent.modes import MODES
from agent.settings.checks import (
    INVALID,
    Checker,
    Field,
    Problem,
    absolute_path,
    any_json,
    boolean,
    key_path,
    list_of,
    map_of,
    non_negative_float,
    one_of,
    optional,
    positive_float,
    positive_int,
    schema_object,
    string,
    suffix,
)
from providers.records import Record

if TYPE_CHECKING:
    from agent.modes import Mode
    from providers.model import WireApi

HookEvent: TypeAlias = Literal["pre_tool_use", "post_tool_use", "user_prompt_submit", "stop"]
HOOK_EVENTS: tuple[HookEvent, ...] = ("pre_tool_use", "post_tool_use", "user_prompt_submit", "stop")


class InvalidSettings(ValueError):
    """A settings object did not validate. `problems` holds every problem found."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(f"{key}: {problem}" for key, problem in self.problems))


class Secret:
    """A string that does not show itself in a repr, a str or an f-string (an inline `apiKey`)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        """The string itself: for the one place that sends it, never for display."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    def __str__(self) -> str:
        return "**********"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


class FileSection:
    """Base of the schema classes: `model_validate` reads one from the JSON of a settings file."""

    __slots__ = ()

    @classmethod
    def model_validate(cls, data: object) -> Self:
        """Build from the parsed JSON of this section (named after pydantic's method, which the
        schema used before).

        Raises:
            InvalidSettings: with every problem found; key paths are relative to `data`.
        """
        problems: list[Problem] = []
        parsed = _OBJECT_CHECKERS[cls](data, "", problems)
        if problems:
            raise InvalidSettings(problems)
        return cast("Self", parsed)


# ---------------------------------------------------------------------------- the schema


class StreamTimeoutSettings(FileSection, Record):
    """`streamTimeouts` (and `providers.<id>.streamTimeouts`): seconds a model stream may stay
    silent before it counts as stalled and the call is retried (`providers.model.StreamTimeouts`
    holds the defaults). Absent keys keep the default, or the general value for a provider."""

    first_event: float | None = None
    """Until the model's first output."""
    idle: float | None = None
    """Between two stream events once output has started."""


class ProviderSettings(FileSection, Record):
    """`providers.<id>`: override a built-in provider, or define a new one."""

    api: WireApi | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    api_key: Secret | None = None
    headers: dict[str, str] = field(default_factory=dict[str, str], repr=False)
    """Not in the repr: an `Authorization` header is a key too."""
    script: str | None = None
    """For `api: scripted`: a JSON script file. A relative path is resolved against the project
    directory (project and local scope) or the settings file's directory (user scope)."""
    stream_timeouts: StreamTimeoutSettings | None = None
    """This provider's own stream timeouts (a local server loading a model may need longer)."""
    enabled: bool | None = None  # False: turned off (`providers/disable`), no model offered


class CostSettings(FileSection, Record):
    """USD per million tokens."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None


class ModelSettings(FileSection, Record):
    """`models.<provider/model>`: facts that override (or supply) the catalog's."""

    name: str | None = None
    context_window: int | None = None
    max_output: int | None = None
    vision: bool | None = None
    reasoning: bool | None = None
    tool_call: bool | None = None
    cost: CostSettings | None = None


class PermissionSettings(FileSection, Record):
    """`Tool` or `Tool(pattern)` rules."""

    allow: list[str] = field(default_factory=list[str])
    ask: list[str] = field(default_factory=list[str])
    deny: list[str] = field(default_factory=list[str])


class StdioServerSettings(FileSection, Record):
    """An MCP server earshot spawns."""

    type: Literal["stdio"] = "stdio"
    command: str
    args: list[str] = field(default_factory=list[str])
    env: dict[str, str] = field(default_factory=dict[str, str], repr=False)
    """Not in the repr: it often carries a token."""
    cwd: str | None = None


class HttpServerSettings(FileSection, Record):
    """An MCP server earshot connects to (streamable HTTP, or legacy SSE)."""

    type: Literal["http", "sse"]
    url: str
    headers: dict[str, str] = field(default_factory=dict[str, str], repr=False)


McpServerSettings: TypeAlias = StdioServerSettings | HttpServerSettings
"""`mcpServers.<name>`: `type` absent or "stdio" is a `StdioServerSettings`, "http"/"sse" an
`HttpServerSettings`."""


class McpSettings(FileSection, Record):
    """`mcp`: how long MCP servers are waited for, in seconds (absent keys keep the defaults of
    `earshot.mcp_connections`)."""

    startup_wait: float | None = None
    """How long a session's first prompt waits for servers still starting (0: it never does)."""
    startup_timeout: float | None = None
    """When a server that has not started (listed its tools) is given up on, as failed."""
    tool_timeout: float | None = None
    """When a tool call the server has not answered fails."""


class HookSettings(FileSection, Record):
    """One hook command. `matcher` selects tools by name (tool events only)."""

    matcher: str | None = None
    command: str
    timeout: float | None = None
    """Seconds."""


class HooksSettings(FileSection, Record):
    """Hook commands per event. The event names are snake_case in the file, unlike every other
    key."""

    pre_tool_use: list[HookSettings] = field(default_factory=list[HookSettings])
    post_tool_use: list[HookSettings] = field(default_factory=list[HookSettings])
    user_prompt_submit: list[HookSettings] = field(default_factory=list[HookSettings])
    stop: list[HookSettings] = field(default_factory=list[HookSettings])


class SandboxSettings(FileSection, Record):
    """`sandbox`: the OS sandbox commands run in (`agent.settings.sandbox` merges the scopes)."""

    enabled: bool | None = None
    network: bool | None = None
    writable_paths: list[str] = field(default_factory=list[str])
    """Absolute or `~/...` paths commands may write besides the workspace and the temp dir."""


class VerifySettings(FileSection, Record):
    """One `verify` entry: the command to run after edits to files matching a glob
    (`agent.code.verify`)."""

    files: str
    command: str
    """`{files}` is replaced by the matching files, shell-quoted."""
    timeout: float | None = None
    """Seconds (default `agent.code.verify.DEFAULT_TIMEOUT`)."""


class LspServerSettings(FileSection, Record):
    """`lsp.<name>`: a language server checking edits to files with these suffixes (agent.lsp)."""

    command: str
    args: list[str] = field(default_factory=list[str])
    extensions: list[str] = field(default_factory=list[str])
    """File suffixes with the dot: `[".py", ".pyi"]`."""
    language_id: str | None = None
    initialization_options: object = None
    """Any JSON value, sent as `initializationOptions`."""
    timeout: float | None = None
    """Seconds to wait for an edit's diagnostics."""


class SettingsFile(FileSection, Record):
    """The content of one settings file."""

    schema_: str | None = None  # `$schema`
    model: str | None = None
    mode: Mode | None = None
    providers: dict[str, ProviderSettings] = field(default_factory=dict[str, ProviderSettings])
    models: dict[str, ModelSettings] = field(default_factory=dict[str, ModelSettings])
    permissions: PermissionSettings = field(default_factory=PermissionSettings)
    mcp_servers: dict[str, McpServerSettings] = field(default_factory=dict[str, McpServerSettings])
    hooks: HooksSettings = field(default_factory=HooksSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    trusted_directories: list[str] = field(default_factory=list[str])
    """User scope only: directories whose repository settings may grant and run
    (agent.settings.trust)."""
    stream_timeouts: StreamTimeoutSettings | None = None
    mcp: McpSettings | None = None
    answered_at: dict[str, str] = field(default_factory=dict[str, str])  # "list:rule" -> when
    verify: list[VerifySettings] = field(default_factory=list[VerifySettings])
    lsp: dict[str, LspServerSettings] = field(default_factory=dict[str, LspServerSettings])
    repo_map: bool | None = None
    cache: CacheSetting | None = None


# ---------------------------------------------------------------------------- checkers


def secret(value: object, path: str, problems: list[Problem]) -> object:
    """A string, wrapped so that it never shows (see `Secret`)."""
    checked = string(value, path, problems)
    return Secret(checked) if isinstance(checked, str) else INVALID


def wire_api(value: object, path: str, problems: list[Problem]) -> object:
    # Imported here: `providers.model` defines classes the settings import does not need.
    from providers.model import WIRE_APIS

    return one_of(WIRE_APIS)(value, path, problems)


# ---------------------------------------------------------------------------- field tables

_OPTIONAL_STRING = optional(string)
_STRINGS = list_of(string)
_STRING_MAP = map_of(string)

_STREAM_TIMEOUTS = schema_object(
    StreamTimeoutSettings,
    [
        Field("firstEvent", "first_event", optional(positive_float)),
        Field("idle", "idle", optional(positive_float)),
    ],
)
_PROVIDER = schema_object(
    ProviderSettings,
    [
        Field("api", "api", optional(wire_api)),
        Field("baseUrl", "base_url", _OPTIONAL_STRING),
        Field("apiKeyEnv", "api_key_env", _OPTIONAL_STRING),
        Field("apiKey", "api_key", optional(secret)),
        Field("headers", "headers", _STRING_MAP),
        Field("script", "script", _OPTIONAL_STRING),
        Field("streamTimeouts", "stream_timeouts", optional(_STREAM_TIMEOUTS)),
        Field("enabled", "enabled", optional(boolean)),
    ],
)
_COST = schema_object(
    CostSettings,
    [
        Field("input", "input", optional(non_negative_float)),
        Field("output", "output", optional(non_negative_float)),
        Field("cacheRead", "cache_read", optional(non_negative_float)),
        Field("cacheWrite", "cache_write", optional(non_negative_float)),
    ],
)
_MODEL = schema_object(
    ModelSettings,
    [
        Field("name", "name", _OPTIONAL_STRING),
        Field("contextWindow", "context_window", optional(positive_int)),
        Field("maxOutput", "max_output", optional(positive_int)),
        Field("vision", "vision", optional(boolean)),
        Field("reasoning", "reasoning", optional(boolean)),
        Field("toolCall", "tool_call", optional(boolean)),
        Field("cost", "cost", optional(_COST)),
    ],
)
_PERMISSIONS = schema_object(
    PermissionSettings, [Field(name, name, _STRINGS) for name in ("allow", "ask", "deny")]
)
_STDIO_SERVER = schema_object(
    StdioServerSettings,
    [
        Field("type", "type", one_of(("stdio",))),
        Field("command", "command", string, required=True),
        Field("args", "args", _STRINGS),
        Field("env", "env", _STRING_MAP),
        Field("cwd", "cwd", _OPTIONAL_STRING),
    ],
)
_HTTP_SERVER = schema_object(
    HttpServerSettings,
    [
        Field("type", "type", one_of(("http", "sse")), required=True),
        Field("url", "url", string, required=True),
        Field("headers", "headers", _STRING_MAP),
    ],
)
_MCP_SERVER_TYPE = one_of(("stdio", "http", "sse"))
_MCP = schema_object(
    McpSettings,
    [
        Field("startupWait", "startup_wait", optional(non_negative_float)),
        Field("startupTimeout", "startup_timeout", optional(positive_float)),
        Field("toolTimeout", "tool_timeout", optional(positive_float)),
    ],
)


def _mcp_server(value: object, path: str, problems: list[Problem]) -> object:
    """`type` picks the shape: absent or "stdio" spawns a command, "http"/"sse" connects."""
    if not isinstance(value, dict):
        problems.append((path, "must be an object"))
        return INVALID
    data = cast("dict[str, object]", value)
    kind = data.get("type", "stdio")
    if kind == "stdio":
        return _STDIO_SERVER(data, path, problems)
    if kind in ("http", "sse"):
        return _HTTP_SERVER(data, path, problems)
    return _MCP_SERVER_TYPE(kind, key_path(path, "type"), problems)  # records the problem


_HOOK = schema_object(
    HookSettings,
    [
        Field("matcher", "matcher", _OPTIONAL_STRING),
        Field("command", "command", string, required=True),
        Field("timeout", "timeout", optional(positive_float)),
    ],
)
_HOOKS = schema_object(
    HooksSettings, [Field(event, event, list_of(_HOOK)) for event in HOOK_EVENTS]
)
_SANDBOX = schema_object(
    SandboxSettings,
    [
        Field("enabled", "enabled", optional(boolean)),
        Field("network", "network", optional(boolean)),
        Field("writablePaths", "writable_paths", list_of(absolute_path)),
    ],
)
_VERIFY = schema_object(
    VerifySettings,
    [
        Field("files", "files", string, required=True),
        Field("command", "command", string, required=True),
        Field("timeout", "timeout", optional(positive_float)),
    ],
)
_LSP_SERVER = schema_object(
    LspServerSettings,
    [
        Field("command", "command", string, required=True),
        Field("args", "args", _STRINGS),
        Field("extensions", "extensions", list_of(suffix), required=True),
        Field("languageId", "language_id", _OPTIONAL_STRING),
        Field("initializationOptions", "initialization_options", any_json),
        Field("timeout", "timeout", optional(positive_float)),
    ],
)
_SETTINGS_FILE = schema_object(
    SettingsFile,
    [
        Field("$schema", "schema_", _OPTIONAL_STRING),
        Field("model", "model", _OPTIONAL_STRING),
        Field("mode", "mode", optional(one_of(MODES))),
        Field("providers", "providers", map_of(_PROVIDER)),
        Field("models", "models", map_of(_MODEL)),
        Field("permissions", "permissions", _PERMISSIONS),
        Field("mcpServers", "mcp_servers", map_of(_mcp_server)),
        Field("hooks", "hooks", _HOOKS),
        Field("sandbox", "sandbox", _SANDBOX),
        Field("trustedDirectories", "trusted_directories", _STRINGS),
        Field("streamTimeouts", "stream_timeouts", optional(_STREAM_TIMEOUTS)),
        Field("mcp", "mcp", optional(_MCP)),
        Field("answeredAt", "answered_at", _STRING_MAP),
        Field("verify", "verify", list_of(_VERIFY)),
        Field("lsp", "lsp", map_of(_LSP_SERVER)),
        Field("repoMap", "repo_map", optional(boolean)),
        Field("cache", "cache", optional(one_of(CACHE_SETTINGS))),
    ],
)


_OBJECT_CHECKERS: Mapping[type[FileSection], Checker] = {
    StreamTimeoutSettings: _STREAM_TIMEOUTS,
    ProviderSettings: _PROVIDER,
    CostSettings: _COST,
    ModelSettings: _MODEL,
    PermissionSettings: _PERMISSIONS,
    StdioServerSettings: _STDIO_SERVER,
    HttpServerSettings: _HTTP_SERVER,
    McpSettings: _MCP,
    HookSettings: _HOOK,
    HooksSettings: _HOOKS,
    SandboxSettings: _SANDBOX,
    VerifySettings: _VERIFY,
    LspServerSettings: _LSP_SERVER,
    SettingsFile: _SETTINGS_FILE,
}
