"""The server's ports: what the composition root (`earshot.acp_main`) supplies to the ACP
server, split by what the server needs and when, each a few members and none found at run time.

- `Workspaces` (asked while `initialize` is answered, before the event loop on stdio: cheap,
  and made before the other ports, which load records; and before each session opens): a
  working directory's settings read again, as a `Workspace`: what a new session there starts
  with, the model picker, credentials.
- `SessionMaker` (for `session/new`, `load`, `resume`): reserves a new session's id and file,
  opens the session (its agent, its slash skills and its warm-up in one `OpenedSession`), and
  holds the session store (`session/list`, `delete`, `fork`).
- `ProviderAdmin`, or None: the unstable `providers/*` methods; without one they are not found.

The server knows ACP; the root knows settings, providers, MCP and skills, and a new feature of a
session is wired there, inside `SessionMaker.open`. Client-supplied MCP servers arrive as plain
records (the server never imports `mcp`), and the root decides what to do with them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from providers.records import Record

if TYPE_CHECKING:
    from pathlib import Path

    from acp_server.mcp_over_acp import McpChannel
    from agent.backends import FileBackend, Interaction, Mode, ProcessBackend
    from agent.session import AgentSession
    from agent.tasks import SessionTasks
    from sessions import SessionStore

JsonObject = dict[str, Any]


class McpStdioServer(Record):
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    """Name/value pairs, in the client's order."""


class McpRemoteServer(Record):
    name: str
    url: str
    transport: Literal["http", "sse"]
    headers: tuple[tuple[str, str], ...] = ()


class McpAcpServer(Record):
    """A server the client provides over the ACP connection itself (`mcp/message`, unstable)."""

    name: str
    server_id: str


McpServerSpec = McpStdioServer | McpRemoteServer | McpAcpServer


class ClientSystemPrompt(Record):
    """Instructions the client gives for a session (`systemPrompt`, unstable): added to the
    agent's own (`append`), or in place of them (`override`, which keeps the safety rules)."""

    mode: Literal["append", "override"]
    text: str


class SessionIO(Record):
    """The editor-backed I/O for one session (None: the root uses local I/O)."""

    files: FileBackend | None
    processes: ProcessBackend | None
    interaction: Interaction
    tasks: SessionTasks | None = None
    """The session's block (`agent.tasks.SessionTasks`, the server's session host holds it for
    as long as the session lives): what outlives a turn runs there (the MCP clients, which must
    stay in one task from connect to close; language servers; index refreshes), and its end
    closes the session. None: nothing can run in the background (MCP servers not connected)."""
    mcp: McpChannel | None = None
    """The client's MCP servers over the connection (`McpAcpServer`); None: there are none."""


class ModelChoice(Record):
    """One entry of the model picker."""

    name: str
    """`provider/model`, the value sent back by `session/set_config_option`."""
    label: str
    provider: str
    """Provider id (the picker groups by it)."""
    provider_label: str
    assumed_window: int | None = None
    """The window earshot assumes for a model nothing gave one for (the picker says so)."""


class SessionDefaults(Record):
    """What a new session in a directory starts with, known before it is built: everything the
    `session/new` answer shows."""

    mode: Mode
    model: str
    """`provider/model`, the default for new sessions in the directory."""
    reasoning: bool
    """Whether the catalog says the model reasons (the thought level picker is offered then)."""
    models: Sequence[ModelChoice]
    """The model picker (`Workspace.models`)."""
    problem: str | None
    """Why the model cannot be created (missing credentials: a sentence naming what to set);
    None when it can."""


class SkillCommand(Record):
    """A project or user skill, offered as `/name args`."""

    name: str
    description: str


class Opening(Record):
    """A session to open: where, with what the editor connects it to, through which I/O."""

    cwd: Path
    additional_directories: Sequence[Path]
    mcp_servers: Sequence[McpServerSpec]
    io: SessionIO
    session_id: str
    """A new session's id (`SessionMaker.reserve` gave it), or the one to reopen."""
    new: bool
    """A new session (its file reserved) rather than a transcript reopened."""
    system_prompt: ClientSystemPrompt | None = None
    """The client's instructions (`systemPrompt`), kept with the session; None: a reopened
    session keeps the ones it was kept with, if any."""


class OpenedSession(Record):
    """What opening a session gives the server, in one answer."""

    agent: AgentSession
    skills: Sequence[SkillCommand]
    """The skills offered as slash commands in the session's directory."""
    warm_up: Callable[[], None]
    """What the session's first prompt would load or build (the model's wire module, its
    provider's SDK and the model's client, the tool modules, the transcript codec), as a
    function doing it: imports, and what is safe to build off the loop (the model's client:
    `SdkModel.prepare`), touching no other state of the session. The server runs it in a
    worker thread once the session is open, so the first prompt reaches the model at once.
    It never raises: a failure shows at the first call."""


class Workspace(Protocol):
    """One working directory as its settings make it (read when it was opened: `Workspaces`);
    the model list and credentials follow the settings as they are now (a provider added from
    the editor applies without a restart)."""

    @property
    def defaults(self) -> SessionDefaults:
        """What a new session here starts with, known before it is built: everything the
        `session/new` answer shows."""
        ...

    def models(self) -> Sequence[ModelChoice]:
        """Every model the user can switch to: credentialed providers' and configured models."""
        ...

    def check_credentials(self, model_name: str) -> str | None:
        """None when the model can be created; else a sentence naming what to set."""
        ...

    async def refresh_models(self, model_name: str) -> bool:
        """Refresh what the picker offers from the servers that list their own models (and
        learn `model_name`'s context window from its server), in the background: it may take
        seconds. True when `models()` changed."""
        ...

    def auth_status(self) -> JsonObject:
        """`{"state", "accounts"}` (ACP's unstable `auth/status`) for the settings as they are
        now: the accounts named, never a key.

        Raises:
            Exception: the settings cannot be read (the state is then `unknown`).
        """
        ...


class Workspaces(Protocol):
    def open(self, cwd: Path) -> Workspace:
        """`cwd` with its settings read again (a permission remembered for the project, an
        edit, `earshot trust`: they apply to the next session without a restart). Called before
        every `session/new`, `load` and `resume`; cheap (settings, credentials, the catalog,
        which stays cached).

        Raises:
            agent.settings.scopes.SettingsError: a settings file is invalid.
        """
        ...

    def credentials_found(self) -> bool:
        """Whether any provider key seems set (asked while `initialize` is answered: cheap,
        imports nothing of the agent); the sign-in method is offered only when not."""
        ...


class SessionMaker(Protocol):
    @property
    def store(self) -> SessionStore:
        """The session store (`session/list`, `delete`, `fork`)."""
        ...

    def reserve(self, cwd: Path, additional_directories: Sequence[Path]) -> str:
        """A new session id, its file already on disk (the header line, `sessions.reserve`)
        with this process holding its writer lock: another process can load the session as soon
        as the id is out, and `open` adopts the file.

        Raises:
            sessions.SessionWriteFailed: the session file cannot be written.
        """
        ...

    def release(self, session_id: str, cwd: Path) -> None:
        """Let go of the writer lock `reserve` took for a session that was never built (its build
        failed, or the input closed first). Its file stays: another process can load it."""
        ...

    async def open(self, opening: Opening) -> OpenedSession:
        """A new session (the default model and mode, in the file `reserve` gave) or a
        transcript reopened. What its tools come from in the background (MCP servers) starts at
        `agent.tool_arrivals.begin()`, which the server calls after the warm-up (or at its
        first turn).

        Raises:
            sessions.SessionNotFound: there is no such transcript to reopen.
        """
        ...


class ProviderAdmin(Protocol):
    """The unstable `providers/*` methods (`acp_server.providers_methods`): what they write is the
    root's. `cwd` says whose settings (the first session's directory, else the process's)."""

    def list_providers(self, cwd: Path) -> list[JsonObject]: ...

    def set_provider(
        self,
        cwd: Path,
        *,
        provider_id: str,
        api_type: str,
        base_url: str,
        headers: Mapping[str, str],
    ) -> None:
        """Raises: ValueError with a `field` attribute (the param at fault, or None)."""
        ...

    def disable_provider(self, cwd: Path, provider_id: str) -> None:
        """Raises: ValueError with a `field` attribute (the param at fault, or None)."""
        ...


class Ports(Record):
    """Everything the server is given by the composition root."""

    workspaces: Workspaces
    sessions: SessionMaker
    providers: ProviderAdmin | None = None
    """None: `providers/*` are not found here (-32601)."""
