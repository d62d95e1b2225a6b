"""What the composition root supplies to the ACP server: a way to make and resume sessions.

The server knows ACP; the factory knows settings, providers, MCP and skills. Client-supplied MCP
servers arrive here as plain dataclasses (the server never imports `mcp`), and the factory decides
what to do with them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, Protocol

from providers.records import Record

if TYPE_CHECKING:
    from pathlib import Path

    from acp_server.mcp_over_acp import McpChannel
    from agent.backends import FileBackend, Interaction, Mode, ProcessBackend
    from agent.session import AgentSession
    from agent.tasks import SessionTasks
    from sessions import SessionStore


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
    """The editor-backed I/O for one session (None: the factory uses local I/O)."""

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
    """The model picker (`SessionFactory.available_models`)."""
    problem: str | None
    """Why the model cannot be created (missing credentials: a sentence naming what to set);
    None when it can."""


class SkillCommand(Record):
    """A project or user skill, offered as `/name args`."""

    name: str
    description: str


class SessionFactory(Protocol):
    """Implemented by the composition root (`earshot.acp_main`)."""

    @property
    def store(self) -> SessionStore: ...

    def available_models(self, cwd: Path) -> Sequence[ModelChoice]:
        """Every model the user can switch to: credentialed providers' and configured models."""
        ...

    def credentials_found(self) -> bool:
        """Whether any provider key seems set (asked while `initialize` is answered: cheap,
        imports nothing of the agent); the sign-in method is offered only when not."""
        ...

    def check_credentials(self, model_name: str, cwd: Path) -> str | None:
        """None when the model can be created; else a sentence naming what to set."""
        ...

    def skills(self, cwd: Path) -> Sequence[SkillCommand]: ...

    async def refresh_models(self, cwd: Path, model_name: str) -> bool:
        """Refresh what the picker offers from the servers that list their own models (and
        learn `model_name`'s context window from its server), in the background: it may take
        seconds. True when `available_models` changed."""
        ...

    def defaults(self, cwd: Path) -> SessionDefaults:
        """What `create` in `cwd` would make next, without making it: the settings are read
        again first (as `refresh` does), and `create` then uses what this read. Cheap (settings,
        credentials, the catalog): `session/new` is answered from it, before the session is
        built.

        Raises:
            agent.settings.scopes.SettingsError: a settings file is invalid.
        """
        ...

    def reserve(self, cwd: Path, additional_directories: Sequence[Path]) -> str:
        """A new session id, its file already on disk (the header line, `sessions.reserve`)
        with this process holding its writer lock: another process can load the session as soon
        as the id is out, and `create(session_id=...)` adopts the file.

        Raises:
            sessions.SessionWriteFailed: the session file cannot be written.
        """
        ...

    def release(self, session_id: str, cwd: Path) -> None:
        """Let go of the writer lock `reserve` took for a session that was never built (its build
        failed, or the input closed first). Its file stays: another process can load it."""
        ...

    def refresh(self, cwd: Path) -> None:
        """Re-read what may have changed since the last session in `cwd` (settings files: a
        permission remembered for the project, an edit, `earshot trust`). Called before every
        `session/load` and `session/resume` (`defaults` does it for `session/new`); must stay
        cheap.

        Raises:
            agent.settings.scopes.SettingsError: a settings file is invalid.
        """
        ...

    def warm_up(self, session: AgentSession) -> Callable[[], None]:
        """What the session's first prompt would load or build (the model's wire module, its
        provider's SDK and the model's client, the tool modules, the transcript codec), as a
        function doing it: imports, and what is safe to build off the loop (the model's client:
        `SdkModel.prepare`), touching no other state of the session. The server runs it in a
        worker thread once the session is open, so the first prompt reaches the model at once.
        The function never raises: a failure shows at the first call."""
        ...

    async def create(
        self,
        *,
        cwd: Path,
        additional_directories: Sequence[Path],
        mcp_servers: Sequence[McpServerSpec],
        io: SessionIO,
        session_id: str | None = None,
        system_prompt: ClientSystemPrompt | None = None,
    ) -> AgentSession:
        """A new session (a new transcript) with the default model and mode; `session_id` is
        the id `reserve` gave (None: a new one). What its tools come from in the background
        (MCP servers) starts at `session.tool_arrivals.begin()`, which the server calls after
        the warm-up (or at its first turn). `system_prompt`: the client's, kept with the
        session."""
        ...

    async def resume(
        self,
        session_id: str,
        *,
        cwd: Path,
        additional_directories: Sequence[Path],
        mcp_servers: Sequence[McpServerSpec],
        io: SessionIO,
        system_prompt: ClientSystemPrompt | None = None,
    ) -> AgentSession:
        """Reopen a transcript (with the client's `system_prompt`; None: the one it was kept
        with, if any). Raises `sessions.SessionNotFound` when there is none."""
        ...
