"""`earshot --stdio`: the ACP server, composed with settings, providers, sessions and the agent.

Nothing here runs before the `initialize` reply except fd juggling: the factory (settings,
catalog, session store) is built when the server first needs it, in the background right after
`initialize` is answered.

Client-supplied MCP servers are parsed by the server and handed to the factory; they are not
connected yet (that belongs to the MCP integration in this package) and are logged as ignored.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from acp_server.factory import McpServerSpec, ModelChoice, SessionIO, SkillCommand
    from agent.session import AgentSession
    from agent.settings import Settings
    from providers.catalog import ModelCatalog
    from providers.model import Model
    from sessions import SessionStore

PREFERRED_MODELS: Mapping[str, tuple[str, ...]] = {
    "anthropic": ("claude-sonnet-4-5", "claude-sonnet-4-6"),
    "openai": ("gpt-5", "gpt-5.1", "o4-mini"),
    "google": ("gemini-2.5-pro", "gemini-2.5-flash"),
    "deepseek": ("deepseek-chat",),
    "xai": ("grok-4.3",),
    "mistral": ("devstral-medium-latest", "mistral-medium-latest"),
}
FALLBACK_MODEL = "anthropic/claude-sonnet-4-5"
"""Named when no provider has credentials, so the error says which key to set."""


class EarshotFactory:
    """Makes `AgentSession`s from settings (per working directory, cached)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        from sessions import SessionStore

        self._environ = dict(os.environ if environ is None else environ)
        self._store = SessionStore()
        self._settings: dict[Path, Settings] = {}
        self._catalogs: dict[Path, ModelCatalog] = {}

    @property
    def store(self) -> SessionStore:
        return self._store

    def settings(self, cwd: Path) -> Settings:
        from agent.settings import load_settings

        settings = self._settings.get(cwd)
        if settings is None:
            settings = load_settings(cwd, environ=self._environ)
            self._settings[cwd] = settings
        return settings

    def catalog(self, cwd: Path) -> ModelCatalog:
        from providers.catalog import ModelCatalog, default_data_dir

        catalog = self._catalogs.get(cwd)
        if catalog is None:
            settings = self.settings(cwd)
            catalog = ModelCatalog.load(
                overrides=settings.model_overrides(),
                data_dir=default_data_dir(self._environ),
                known_providers=tuple(settings.providers),
            )
            self._catalogs[cwd] = catalog
        return catalog

    def prepare(self, cwd: Path) -> None:
        import importlib

        importlib.import_module("agent.session")
        self.default_model(cwd)
        self.available_models(cwd)

    def _credentialed(self, cwd: Path) -> list[str]:
        from providers.registry import credentialed_providers

        return credentialed_providers(self._environ, self.settings(cwd).user_providers())

    def default_model(self, cwd: Path) -> str:
        settings = self.settings(cwd)
        if settings.model:
            return settings.model
        catalog = self.catalog(cwd)
        for provider in self._credentialed(cwd):
            models = [info for info in catalog.models(provider) if info.tool_call]
            ids = {info.id for info in models}
            for preferred in PREFERRED_MODELS.get(provider, ()):
                if preferred in ids:
                    return f"{provider}/{preferred}"
            if models:
                return f"{provider}/{models[-1].id}"
        return FALLBACK_MODEL

    def available_models(self, cwd: Path) -> Sequence[ModelChoice]:
        from acp_server.factory import ModelChoice
        from providers.registry import provider_spec, split_model_name

        catalog = self.catalog(cwd)
        settings = self.settings(cwd)
        choices: list[ModelChoice] = []

        def label_of(provider: str) -> str:
            spec = provider_spec(provider)
            return spec.name if spec is not None else provider

        for provider in self._credentialed(cwd):
            for info in catalog.models(provider):
                if info.tool_call:
                    choices.append(
                        ModelChoice(
                            name=f"{provider}/{info.id}",
                            label=info.name,
                            provider=provider,
                            provider_label=label_of(provider),
                        )
                    )
        configured = [name for name in (settings.model, *settings.models) if name]
        for name in configured:
            try:
                provider, model_id = split_model_name(name)
            except ValueError:
                continue
            override = settings.models.get(name)
            choices.append(
                ModelChoice(
                    name=name,
                    label=(override.name if override and override.name else model_id),
                    provider=provider,
                    provider_label=label_of(provider),
                )
            )
        return choices

    def check_credentials(self, model_name: str, cwd: Path) -> str | None:
        from providers.registry import (
            MissingCredentials,
            UnknownProvider,
            resolve_endpoint,
            split_model_name,
        )

        try:
            provider, _ = split_model_name(model_name)
            resolve_endpoint(provider, self.settings(cwd).user_providers(), self._environ)
        except (MissingCredentials, UnknownProvider, ValueError) as exc:
            return f"{exc} (model {model_name})"
        return None

    def skills(self, cwd: Path) -> Sequence[SkillCommand]:
        from acp_server.factory import SkillCommand
        from agent.skills import SkillIndex

        try:
            index = SkillIndex.discover(cwd)
        except OSError:
            return ()
        return [
            SkillCommand(name=skill.name, description=skill.description) for skill in index.skills
        ]

    def _model_factory(self, cwd: Path) -> tuple[ModelCatalog, Settings, object]:
        from providers.registry import create_model

        settings = self.settings(cwd)
        catalog = self.catalog(cwd)
        user_providers = settings.user_providers()

        def make(name: str) -> Model:
            return create_model(
                name, user_providers=user_providers, environ=self._environ, catalog=catalog
            )

        return catalog, settings, make

    def _note_mcp(self, servers: Sequence[McpServerSpec]) -> None:
        if servers:
            from acp_server.log import log

            log(
                "client MCP servers are not connected yet",
                {"servers": [server.name for server in servers]},
            )

    async def create(
        self,
        *,
        cwd: Path,
        additional_directories: Sequence[Path],
        mcp_servers: Sequence[McpServerSpec],
        io: SessionIO,
    ) -> AgentSession:
        return await self._open(None, cwd, additional_directories, mcp_servers, io)

    async def resume(
        self,
        session_id: str,
        *,
        cwd: Path,
        additional_directories: Sequence[Path],
        mcp_servers: Sequence[McpServerSpec],
        io: SessionIO,
    ) -> AgentSession:
        return await self._open(session_id, cwd, additional_directories, mcp_servers, io)

    async def _open(
        self,
        session_id: str | None,
        cwd: Path,
        additional_directories: Sequence[Path],
        mcp_servers: Sequence[McpServerSpec],
        io: SessionIO,
    ) -> AgentSession:
        from agent.session import SessionOptions, create_session

        self._note_mcp(mcp_servers)
        catalog, settings, make = self._model_factory(cwd)
        options = SessionOptions(model_name=self.default_model(cwd), mode=settings.mode)
        return await create_session(
            store=self._store,
            cwd=cwd,
            options=options,
            model_factory=make,  # pyright: ignore[reportArgumentType]
            catalog=catalog,
            settings=settings,
            files=io.files,
            processes=io.processes,
            interaction=io.interaction,
            additional_directories=additional_directories,
            resume_id=session_id,
        )


async def _build_factory() -> EarshotFactory:
    return EarshotFactory()


def run_stdio() -> int:
    """Serve ACP on stdin/stdout until stdin closes."""
    from acp_server.stdio import serve_stdio
    from earshot import __version__

    return serve_stdio(factory_provider=_build_factory, version=__version__)


def main() -> int:
    """Entry for `python -m earshot.acp_main`."""
    return run_stdio()


if __name__ == "__main__":
    sys.exit(main())
