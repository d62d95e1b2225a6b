"""`earshot --stdio`: the ACP server, composed with settings, providers, sessions and the agent.

Nothing here runs before the `initialize` reply: the factory is cheap to make. `session/new` is
answered from `EarshotFactory.defaults` (settings, credentials, catalog) and `reserve` (the id and
its file: no session store yet); the server then builds the session (`create`) on the event loop
and, once it is open, imports the model's SDK in a worker thread (`warm_up`).

MCP servers, from settings and from the client's `session/new`, are connected through
`earshot.compose.open_session`; the server itself never imports `mcp`.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from acp_server.factory import (
        ClientSystemPrompt,
        McpServerSpec,
        ModelChoice,
        SessionDefaults,
        SessionIO,
        SkillCommand,
    )
    from agent.session import AgentSession
    from earshot.compose import Composition
    from sessions import SessionStore


class EarshotFactory:
    """Makes `AgentSession`s for the ACP server. Model choice, credentials, the catalog and MCP
    come from `earshot.compose` (shared with print mode), one `Composition` per working
    directory; MCP servers (the settings' and the editor's) are connected for every session, their
    long-lived tasks started in the session's block (`SessionIO.tasks`).

    Cheap to make: the session store loads at first use, so the first `session/new` is answered
    (`defaults`, `reserve`) before anything else has loaded."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = dict(os.environ if environ is None else environ)
        self._store: SessionStore | None = None
        self._compositions: dict[Path, Composition] = {}

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            from sessions.store import SessionStore

            # `process`: how another process that finds one of our sessions open names us.
            self._store = SessionStore(
                _sessions_root(self._store, self._environ), process="earshot --stdio"
            )
        return self._store

    def composition(self, cwd: Path) -> Composition:
        from earshot.compose import Composition

        composition = self._compositions.get(cwd)
        if composition is None:
            composition = Composition.load(cwd, environ=self._environ)
            self._compositions[cwd] = composition
        return composition

    def refresh(self, cwd: Path) -> None:
        """Read `cwd`'s settings again (a session is about to open): what an earlier session
        remembered for the project, edited settings and `earshot trust` apply to it. The catalog
        stays cached unless its settings changed."""
        current = self._compositions.get(cwd)
        if current is None:
            self.composition(cwd)
        else:
            self._compositions[cwd] = current.reload()

    def defaults(self, cwd: Path) -> SessionDefaults:
        from acp_server.factory import SessionDefaults
        from providers.registry import split_model_name

        self.refresh(cwd)
        composition = self.composition(cwd)
        model = composition.default_model().name
        try:
            info = composition.catalog.get(*split_model_name(model))
        except ValueError:
            info = None
        return SessionDefaults(
            mode=composition.settings.mode,
            model=model,
            reasoning=bool(info is not None and info.reasoning),
            models=self.available_models(cwd),
            problem=composition.check_credentials(model),
        )

    def reserve(self, cwd: Path, additional_directories: Sequence[Path]) -> str:
        from earshot import __version__
        from sessions.ids import new_id
        from sessions.reserve import reserve

        session_id = new_id()
        # The cwd as `agent.session.creation.create_session` records it (resolved), so the
        # build adopts this file rather than refusing the id.
        try:
            reserve(
                _sessions_root(self._store, self._environ),
                session_id=session_id,
                cwd=str(cwd.resolve()),
                additional_directories=[str(p.resolve()) for p in additional_directories],
                earshot_version=__version__,
            )
        except OSError as exc:
            from sessions import SessionWriteFailed

            raise SessionWriteFailed(str(_sessions_root(self._store, self._environ)), exc) from exc
        return session_id

    def release(self, session_id: str, cwd: Path) -> None:
        import os

        from sessions.reserve import cwd_hash, take_reserved_lock

        lock = (
            _sessions_root(self._store, self._environ)
            / cwd_hash(cwd.resolve())
            / f"{session_id}.lock"
        )
        fd = take_reserved_lock(lock)
        if fd is not None:
            os.close(fd)

    def warm_up(self, session: AgentSession) -> Callable[[], None]:
        from providers.registry import first_call_warm_up

        composition = self.composition(session.cwd)
        first_call = first_call_warm_up(
            session.model_name, user_providers=composition.user_providers, environ=self._environ
        )
        model = session.turn_config.model

        def warm_up() -> None:
            from earshot.import_lock import IMPORTS

            with IMPORTS:  # never beside the MCP SDK's import (a session's servers starting)
                from agent.tools import builtin_tools, task_tool
                from providers import codec
                from providers.wire.sdk_model import SdkModel

                # Hundreds of thousands of objects (an SDK's types) come into being here, none
                # of them garbage: collections meanwhile only rescan them (~15% of an SDK's
                # import).
                collecting = gc.isenabled()
                gc.disable()
                try:
                    codec.warm_up()  # the first prompt's append to the transcript
                    # The tool modules (pydantic input models, the shell parser, the HTTP
                    # client): the first turn loads them. Pure imports: the tools are
                    # module-level values.
                    builtin_tools()
                    task_tool()
                    if isinstance(model, SdkModel):
                        model.prepare()  # the SDK, and the model's own client (its TLS context)
                    else:
                        first_call()
                finally:
                    _freeze_once()
                    if collecting:
                        gc.enable()

        return warm_up

    def available_models(self, cwd: Path) -> Sequence[ModelChoice]:
        from acp_server.factory import ModelChoice
        from earshot.model_choices import assumed_window, model_entries

        composition = self.composition(cwd)
        return [
            ModelChoice(
                name=entry.name,
                label=entry.label,
                provider=entry.provider,
                provider_label=entry.provider_label,
                assumed_window=assumed_window(composition.catalog, entry.name),
            )
            for entry in model_entries(composition)
        ]

    def list_providers(self, cwd: Path) -> list[dict[str, Any]]:
        from earshot.provider_admin import list_providers

        return list_providers(self.composition(cwd))

    def set_provider(
        self,
        cwd: Path,
        *,
        provider_id: str,
        api_type: str,
        base_url: str,
        headers: Mapping[str, str],
    ) -> None:
        from earshot.provider_admin import set_provider

        set_provider(_user_file(cwd, self._environ), provider_id, api_type, base_url, headers)
        self.refresh(cwd)

    def disable_provider(self, cwd: Path, provider_id: str) -> None:
        from earshot.provider_admin import disable_provider
        from providers.registry import all_providers

        composition = self.composition(cwd)
        known = {spec.id for spec in all_providers()} | set(composition.settings.providers)
        disable_provider(_user_file(cwd, self._environ), provider_id, known)
        self.refresh(cwd)

    def auth_status(self, cwd: Path) -> dict[str, Any]:
        from earshot.auth_status import auth_status

        return auth_status(self.composition(cwd))

    def credentials_found(self) -> bool:
        from earshot.login import credentials_found

        return credentials_found(self._environ)

    def check_credentials(self, model_name: str, cwd: Path) -> str | None:
        return self.composition(cwd).check_credentials(model_name)

    async def refresh_models(self, cwd: Path, model_name: str) -> bool:
        """Ask the servers behind the picker (and `model_name`'s, for its window) for their
        models, if their cached lists are stale; True when the picker's list changed."""
        from earshot.model_lists import refresh

        return await refresh(self.composition(cwd), model_name)

    def skills(self, cwd: Path) -> Sequence[SkillCommand]:
        from acp_server.factory import SkillCommand
        from agent.session import discover_skills

        try:
            # What the session offers: the project's skills only in a trusted workspace, every
            # skill file through the read checks (agent.skills).
            index = discover_skills(cwd, self.composition(cwd).settings)
        except (OSError, ValueError):
            return ()
        return [
            SkillCommand(name=skill.name, description=skill.description) for skill in index.skills
        ]

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
        return await self._open(
            None,
            cwd,
            additional_directories,
            mcp_servers,
            io,
            new_id=session_id,
            system_prompt=system_prompt,
        )

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
        return await self._open(
            session_id, cwd, additional_directories, mcp_servers, io, system_prompt=system_prompt
        )

    async def _open(
        self,
        session_id: str | None,
        cwd: Path,
        additional_directories: Sequence[Path],
        mcp_servers: Sequence[McpServerSpec],
        io: SessionIO,
        *,
        new_id: str | None = None,
        system_prompt: ClientSystemPrompt | None = None,
    ) -> AgentSession:
        from agent.context import ClientPrompt
        from earshot.compose import open_session

        composition = self.composition(cwd)
        pick = composition.default_model()
        # A resumed session runs the transcript's own model: only a new one announces the pick.
        announce = pick.announcement() if session_id is None else None
        return await open_session(
            composition,
            store=self.store,
            model_name=pick.name,
            notices=[announce] if announce else [],
            resume_id=session_id,
            new_id=new_id,
            additional_directories=additional_directories,
            client_servers=mcp_servers,
            mcp_channel=io.mcp,
            client_prompt=None
            if system_prompt is None
            else ClientPrompt(mode=system_prompt.mode, text=system_prompt.text),
            # A new session's are started after its warm-up (`tool_arrivals.begin()`), so that
            # the MCP SDK's import does not delay what its first prompt needs.
            start_mcp=session_id is not None,
            tasks=io.tasks,
            files=io.files,
            processes=io.processes,
            interaction=io.interaction,
            current=lambda: self.composition(cwd),
        )


def _sessions_root(store: SessionStore | None, environ: Mapping[str, str]) -> Path:
    """Where the store keeps sessions (known before the store itself loads)."""
    if store is not None:
        return store.root
    from sessions.paths import data_dir

    return data_dir(environ) / "sessions"


def _user_file(cwd: Path, environ: Mapping[str, str]) -> Path:
    from agent.settings import settings_paths

    return settings_paths(cwd, environ=environ)["user"]


_frozen = False


def _freeze_once() -> None:
    """After the process's first warm-up, put what is loaded (the SDK, the agent) out of every
    later collection's way (`gc.freeze`: the permanent generation): a full collection otherwise
    rescans its ~1M objects, ~40 ms each time, in some turn's time. Once: each freeze also keeps
    whatever cyclic garbage is pending at that moment (objects freed by reference counting are
    freed as before), so later sessions, which load nothing big, do not freeze again."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.freeze()


def run_stdio() -> int:
    """Serve ACP on stdin/stdout until stdin closes."""
    from acp_server.stdio import serve_stdio
    from earshot import __version__

    return serve_stdio(factory=EarshotFactory(), version=__version__)


def main() -> int:
    """Entry for `python -m earshot.acp_main`."""
    return run_stdio()


if __name__ == "__main__":
    sys.exit(main())
