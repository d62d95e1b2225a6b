"""Settings, environment and working directory turned into what
`agent.session.creation.create_session` needs: the model factory, the catalog, the model name,
and the MCP servers to connect.

Shared by the ACP server's session maker (`earshot.acp_main`) and print mode, so both pick the
same model the same way:

    --model flag  >  EARSHOT_MODEL  >  settings `model`  >  the first provider with credentials
    (Anthropic, OpenAI, Gemini, OpenRouter, then the rest) with a default model for it.

Nothing here echoes a key: messages name variables, never values.

Workspace trust is applied when the settings are loaded (`agent.settings.trust`): MCP servers, hooks
and allow rules from an untrusted repository never reach this module; `open_session` only says,
once, what was left out.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from acp_server.mcp_over_acp import McpChannel
    from acp_server.ports import McpServerSpec
    from agent.backends import FileBackend, Interaction, Mode, ProcessBackend
    from agent.context import ClientPrompt
    from agent.session import AgentSession
    from agent.settings import Settings
    from agent.tasks import SessionTasks
    from earshot.mcp_tools import McpServer
    from providers.catalog import ModelCatalog
    from providers.model import Model
    from providers.registry import UserProviderConfig
    from sessions import SessionStore

DEFAULT_MODELS: Mapping[str, tuple[str, ...]] = {
    "anthropic": ("claude-sonnet-4-5", "claude-sonnet-4-6"),
    "openai": ("gpt-5", "gpt-5.1", "o4-mini"),
    "google": ("gemini-2.5-pro", "gemini-2.5-flash"),
    "openrouter": ("anthropic/claude-sonnet-4.5", "openai/gpt-5"),
    "groq": ("moonshotai/kimi-k2-instruct-0905", "openai/gpt-oss-120b"),
    "deepseek": ("deepseek-chat",),
    "xai": ("grok-4.3",),
    "mistral": ("devstral-medium-latest", "mistral-medium-latest"),
}
"""Preferred defaults per provider, first one the catalog knows wins; a provider not listed gets
its last tool-calling model in catalog order."""
FALLBACK_MODEL = "anthropic/claude-sonnet-4-5"
"""Named when no provider has credentials, so the error says which key to set."""
KEY_HINT_PROVIDERS = ("anthropic", "openai", "google", "openrouter")
"""The providers a "no credentials" message suggests."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelPick:
    """The model a session will use, and why."""

    name: str
    """`provider/model`."""
    reason: str
    """Where it came from, for the user: "--model", "EARSHOT_MODEL", "settings", or the default
    for a credentialed provider."""
    automatic: bool = False
    """Nothing named a model: earshot chose it (the user should be told)."""

    def announcement(self) -> str | None:
        """For a front end that shows no model line of its own (ACP): the sentence saying an
        automatic pick, once per session; None when the user named the model."""
        if not self.automatic:
            return None
        return (
            f"No model is configured: using {self.name}, {self.reason}. Choose another in the "
            'model menu, or set "model" in settings.'
        )


class NoCredentials(Exception):
    """No model was named and no provider has credentials. The message says what to set."""


class Composition:
    """Everything derived from one working directory's settings and the environment."""

    def __init__(
        self,
        cwd: Path,
        settings: Settings,
        environ: Mapping[str, str],
        *,
        catalog: ModelCatalog | None = None,
        config_home: Path | None = None,
    ) -> None:
        self.cwd = cwd
        self.settings = settings
        self.environ = environ
        self._catalog = catalog
        self._config_home = config_home
        self._user_providers: dict[str, UserProviderConfig] | None = None

    @classmethod
    def load(
        cls,
        cwd: Path,
        *,
        environ: Mapping[str, str] | None = None,
        config_home: Path | None = None,
    ) -> Composition:
        """Read the settings for `cwd`.

        Raises:
            agent.settings.scopes.SettingsError: a settings file is invalid (names file and key).
        """
        from agent.settings import load_settings

        environ = dict(os.environ if environ is None else environ)
        settings = load_settings(cwd, environ=environ, config_home=config_home)
        return cls(cwd, settings, environ, config_home=config_home)

    def reload(self) -> Composition:
        """The same directory with its settings read again (a permission remembered for the
        project, a file edited, `earshot trust`). The catalog is kept when the settings it is
        built from (`models`, the provider ids) did not change: it is the expensive part.

        Raises:
            agent.settings.scopes.SettingsError: a settings file is invalid (names file and key).
        """
        from agent.settings import load_settings

        settings = load_settings(self.cwd, environ=self.environ, config_home=self._config_home)
        same_catalog_inputs = settings.model_overrides() == self.settings.model_overrides() and (
            tuple(settings.providers) == tuple(self.settings.providers)
        )
        return Composition(
            self.cwd,
            settings,
            self.environ,
            catalog=self._catalog if same_catalog_inputs else None,
            config_home=self._config_home,
        )

    # ------------------------------------------------------------------------- providers

    @property
    def user_providers(self) -> dict[str, UserProviderConfig]:
        if self._user_providers is None:
            self._user_providers = self.settings.user_providers()
        return self._user_providers

    @property
    def catalog(self) -> ModelCatalog:
        """models.dev data with the settings' `models` overrides, loaded at first use, and the
        windows servers reported as far as the cache knows (`earshot.model_lists`)."""
        if self._catalog is None:
            from earshot.model_lists import cached_windows
            from providers.catalog import ModelCatalog, default_data_dir

            catalog = ModelCatalog.load(
                overrides=self.settings.model_overrides(),
                data_dir=default_data_dir(self.environ),
                known_providers=tuple(self.settings.providers),
            )
            self._catalog = catalog
            catalog.learn_windows(cached_windows(self))
        return self._catalog

    def credentialed(self) -> list[str]:
        """Providers with credentials in the environment or settings, best first."""
        from providers.registry import credentialed_providers

        disabled = self.disabled_providers()
        found = credentialed_providers(self.environ, self.user_providers)
        return [provider for provider in found if provider not in disabled]

    def disabled_providers(self) -> frozenset[str]:
        """Providers the settings turn off (`enabled: false`, ACP `providers/disable`)."""
        return frozenset(
            provider_id
            for provider_id, entry in self.settings.providers.items()
            if entry.enabled is False
        )

    def model_factory(self) -> Callable[[str], Model]:
        """`provider/model` -> a `Model`, with these settings, keys and catalog."""
        from providers.model import StreamTimeouts
        from providers.registry import create_model

        user_providers, environ, catalog = self.user_providers, self.environ, self.catalog
        configured = self.settings.stream_timeouts
        timeouts = StreamTimeouts().merged(first_event=configured.first_event, idle=configured.idle)
        disabled = self.disabled_providers()

        def make(name: str) -> Model:
            if name.split("/", 1)[0] in disabled:
                raise ValueError(f"the provider of {name} is disabled in your settings")
            return create_model(
                name,
                user_providers=user_providers,
                environ=environ,
                catalog=catalog,
                stream_timeouts=timeouts,
            )

        return make

    def check_credentials(self, model_name: str) -> str | None:
        """None when `model_name` can be created; else a sentence naming what to set."""
        from providers.registry import (
            MissingCredentials,
            UnknownProvider,
            resolve_endpoint,
            split_model_name,
        )

        try:
            provider, _ = split_model_name(model_name)
            if provider in self.disabled_providers():
                return f"the provider {provider} is disabled in your settings (model {model_name})"
            resolve_endpoint(provider, self.user_providers, self.environ)
        except (MissingCredentials, UnknownProvider, ValueError) as exc:
            return f"{exc} (model {model_name})"
        return None

    # ----------------------------------------------------------------------------- model

    def default_model(self) -> ModelPick:
        """The model new sessions use: `EARSHOT_MODEL`, settings `model`, else the default of
        the first credentialed provider; `FALLBACK_MODEL` when nothing has credentials (so the
        error names a key to set)."""
        return self._configured() or self._credentialed_default() or self._fallback()

    def pick_model(self, flag: str | None = None) -> ModelPick:
        """Like `default_model`, with a `--model` flag first.

        Raises:
            NoCredentials: nothing names a model and no provider has credentials.
        """
        if flag:
            return ModelPick(name=flag.strip(), reason="--model")
        pick = self._configured() or self._credentialed_default()
        if pick is None:
            raise NoCredentials(self.no_credentials_message())
        return pick

    def no_credentials_message(self) -> str:
        from providers.registry import provider_spec

        variables: list[str] = []
        for provider in KEY_HINT_PROVIDERS:
            spec = provider_spec(provider)
            if spec is not None and spec.env:
                variables.append(f"{spec.env[0]} ({spec.name})")
        return (
            "no model provider has credentials: set "
            + ", ".join(variables[:-1])
            + f" or {variables[-1]}, or name a model with --model, EARSHOT_MODEL or "
            '"model" in settings (see `earshot models`)'
        )

    def _configured(self) -> ModelPick | None:
        from agent.settings import MODEL_ENV

        if self.environ.get(MODEL_ENV, "").strip():
            return ModelPick(name=self.environ[MODEL_ENV].strip(), reason=MODEL_ENV)
        if self.settings.model:
            return ModelPick(name=self.settings.model, reason="settings")
        return None

    def _credentialed_default(self) -> ModelPick | None:
        for provider in self.credentialed():
            model = self.provider_default(provider)
            if model is not None:
                return ModelPick(
                    name=f"{provider}/{model}",
                    reason=f"the default for {provider} ({self._credential_source(provider)})",
                    automatic=True,
                )
        return None

    def _fallback(self) -> ModelPick:
        return ModelPick(name=FALLBACK_MODEL, reason="no provider has credentials", automatic=True)

    def provider_default(self, provider: str) -> str | None:
        """The default model id of `provider`, if the catalog knows any tool-calling one."""
        models = [info for info in self.catalog.models(provider) if info.tool_call]
        ids = {info.id for info in models}
        for preferred in DEFAULT_MODELS.get(provider, ()):
            if preferred in ids:
                return preferred
        return models[-1].id if models else None

    def credential_source(self, provider: str) -> str:
        """Where `provider`'s credentials come from, by name only (`ANTHROPIC_API_KEY is
        set`, `providers.<id> in settings`): never a value."""
        return self._credential_source(provider)

    def _credential_source(self, provider: str) -> str:
        from providers.registry import provider_spec

        user = self.user_providers.get(provider)
        if user is not None and (user.api_key or user.api_key_env or user.base_url):
            return f"providers.{provider} in settings"
        spec = provider_spec(provider)
        if spec is not None:
            for variable in spec.env:
                if self.environ.get(variable, "").strip():
                    return f"{variable} is set"
        return "configured"

    # ------------------------------------------------------------------------------- MCP

    def mcp_servers(self) -> list[McpServer]:
        """The MCP servers the settings configure for this directory."""
        from earshot.mcp_tools import servers_from_settings

        return servers_from_settings(self.settings, self.cwd)


async def open_session(
    composition: Composition,
    *,
    store: SessionStore,
    model_name: str,
    mode: Mode | None = None,
    notices: Sequence[str] = (),
    resume_id: str | None = None,
    new_id: str | None = None,
    additional_directories: Sequence[Path] = (),
    client_servers: Sequence[McpServerSpec] = (),
    mcp_channel: McpChannel | None = None,
    client_prompt: ClientPrompt | None = None,
    tasks: SessionTasks | None = None,
    files: FileBackend | None = None,
    processes: ProcessBackend | None = None,
    interaction: Interaction | None = None,
    mcp_timeout: float | None = None,
    mcp_wait: float | None = None,
    start_mcp: bool = True,
    errlog: TextIO | None = None,
    current: Callable[[], Composition] | None = None,
) -> AgentSession:
    """Start the MCP servers (settings' and the client's) in the background, all at once, and
    create or resume the session at once: its first turn waits for the servers still starting at
    most `mcp_wait` seconds (`mcp.startupWait`), a server that starts later joins at a later
    model request, and one that fails (or has not started within `mcp_timeout`,
    `mcp.startupTimeout`) is said once as a warning (`earshot.mcp_connections`). The connections
    close with the session.

    `tasks` is the session's block (`agent.tasks.SessionTasks`, which the front end holds for as
    long as the session lives): the MCP clients' long-lived tasks run there, as do the session's
    language servers and index refreshes, and its end closes the session. None leaves MCP
    servers unconnected (and says so). `start_mcp` False: they start when the front end calls
    `session.tool_arrivals.begin()` (once it has loaded what a turn needs: the SDK's import then
    runs beside the first turn, within its wait), or at the first turn. `notices` are said at
    the start of the first turn, before the ones found here.
    `new_id`: the id of a new session, already given to the client (its file reserved).
    `current`: the composition as it is now (the ACP server reads settings again after
    `providers/set`); a model switch and `/model` use it. `mcp_channel`: where the client's
    servers over ACP are reached (`mcp/message`); `client_prompt`: the client's instructions
    (`SessionOptions.client_prompt`).

    Raises:
        agent.session.agent_session.ModelUnavailable: the model cannot be built.
        sessions.SessionNotFound: `resume_id` names no session.
    """
    from agent.session import SessionOptions, ToolArrivals, create_session
    from earshot.mcp_commands import mcp_command_source
    from earshot.mcp_connections import (
        CALL_TIMEOUT_SECONDS,
        CONNECT_TIMEOUT_SECONDS,
        STARTUP_WAIT_SECONDS,
        McpConnections,
    )
    from earshot.mcp_tools import merge_servers, servers_from_client
    from earshot.model_choices import model_names

    def latest() -> Composition:
        return composition if current is None else current()

    servers = merge_servers(
        composition.mcp_servers(),
        servers_from_client(client_servers, composition.cwd, mcp_channel),
    )
    notices = list(notices)
    if composition.settings.ignored:
        # Known before the first turn, so said once, at its start (`SessionOptions.notices`).
        notices.append(composition.settings.ignored.notice(composition.cwd))
    if servers and tasks is None:
        names = ", ".join(server.name for server in servers)
        notices.append(f"MCP servers not connected ({names}): this front end cannot host them")
        servers = []
    waits = composition.settings.mcp
    budget = _first(mcp_wait, waits.startup_wait, STARTUP_WAIT_SECONDS)

    async def startup() -> None:  # the first turn's wait
        await connections.wait_started(budget)

    connections = McpConnections(
        servers,
        spawn=None if tasks is None else tasks.start_soon,
        arrivals=ToolArrivals(startup, begin=lambda: connections.start(warmed=True)),
        startup_timeout=_first(mcp_timeout, waits.startup_timeout, CONNECT_TIMEOUT_SECONDS),
        call_timeout=_first(None, waits.tool_timeout, CALL_TIMEOUT_SECONDS),
        errlog=errlog,
    )
    options = SessionOptions(
        model_name=model_name,
        mode=mode or composition.settings.mode,
        client_prompt=client_prompt,
        notices=notices,
        model_choices=lambda: model_names(latest()),
        command_sources=[mcp_command_source(connections)],
        on_close=[connections.aclose],
        tool_arrivals=connections.arrivals,
    )
    try:
        session = await create_session(
            store=store,
            cwd=composition.cwd,
            options=options,
            # Built from the settings as they are at each switch: a provider added or turned
            # off from the editor (`providers/set`) applies without a restart.
            model_factory=lambda name: latest().model_factory()(name),
            catalog=composition.catalog,
            settings=composition.settings,
            files=files,
            processes=processes,
            interaction=interaction,
            additional_directories=additional_directories,
            resume_id=resume_id,
            promised_id=new_id,
            tasks=tasks,
        )
    except BaseException:
        await connections.aclose()
        raise
    if start_mcp:
        connections.start()  # in the background
    return session


def _first(*values: float | None) -> float:
    """The first value given (the caller's, the settings', the default)."""
    return next(value for value in values if value is not None)
