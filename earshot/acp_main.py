"""`earshot --stdio`: the ACP server, composed with settings, providers, sessions and the agent.

The server's ports (`acp_server.ports`) are implemented here: `EarshotWorkspaces` (one
`Composition` per working directory, read again before each session opens), `EarshotSessions`
(reserve, open: the agent, its skills and its warm-up; the store) and `EarshotProviders` (the
`providers/*` methods). Nothing here runs before the `initialize` reply: the ports are cheap to
make. `session/new` is answered from the directory's workspace (settings, credentials, catalog)
and `reserve` (the id and its file: no session store yet); the server then opens the session on
the event loop and, once it is open, runs its warm-up in a worker thread (the model's SDK).

MCP servers, from settings and from the client's `session/new`, are connected through
`earshot.compose.open_session`; the server itself never imports `mcp`. A new feature of a
session is wired in `EarshotSessions.open` (and `compose.open_session`), not in the server.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from acp_server.ports import (
        ModelChoice,
        OpenedSession,
        Opening,
        Ports,
        SessionDefaults,
        SkillCommand,
    )
    from agent.context import ClientPrompt
    from agent.session import AgentSession
    from earshot.compose import Composition
    from sessions import SessionStore


class EarshotWorkspaces:
    """`acp_server.ports.Workspaces`: model choice, credentials, the catalog and MCP come from
    `earshot.compose` (shared with print mode), one `Composition` per working directory."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self._compositions: dict[Path, Composition] = {}

    def composition(self, cwd: Path) -> Composition:
        """`cwd`'s composition as it is now (read at the first use)."""
        from earshot.compose import Composition

        composition = self._compositions.get(cwd)
        if composition is None:
            composition = Composition.load(cwd, environ=self.environ)
            self._compositions[cwd] = composition
        return composition

    def refresh(self, cwd: Path) -> None:
        """Read `cwd`'s settings again: what an earlier session remembered for the project,
        edited settings and `earshot trust` apply from now on. The catalog stays cached unless
        its settings changed."""
        current = self._compositions.get(cwd)
        if current is None:
            self.composition(cwd)
        else:
            self._compositions[cwd] = current.reload()

    def open(self, cwd: Path) -> EarshotWorkspace:
        self.refresh(cwd)
        return EarshotWorkspace(self, cwd)

    def credentials_found(self) -> bool:
        from earshot.login import credentials_found

        return credentials_found(self.environ)


class EarshotWorkspace:
    """`acp_server.ports.Workspace`: one directory's composition, as it was when opened for
    `defaults` and as it is now for the picker (a provider added from the editor)."""

    def __init__(self, workspaces: EarshotWorkspaces, cwd: Path) -> None:
        self._workspaces = workspaces
        self.cwd = cwd
        self._opened = workspaces.composition(cwd)
        self._defaults: SessionDefaults | None = None

    @property
    def defaults(self) -> SessionDefaults:
        """Made at the first ask (`session/new`; a load or resume never asks)."""
        if self._defaults is None:
            self._defaults = self._made_defaults()
        return self._defaults

    def _made_defaults(self) -> SessionDefaults:
        from acp_server.ports import SessionDefaults
        from providers.registry import split_model_name

        composition = self._opened
        model = composition.default_model().name
        try:
            info = composition.catalog.get(*split_model_name(model))
        except ValueError:
            info = None
        return SessionDefaults(
            mode=composition.settings.mode,
            model=model,
            reasoning=bool(info is not None and info.reasoning),
            models=self.models(),
            problem=composition.check_credentials(model),
        )

    def models(self) -> Sequence[ModelChoice]:
        from acp_server.ports import ModelChoice
        from earshot.model_choices import assumed_window, model_entries

        composition = self._workspaces.composition(self.cwd)
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

    def check_credentials(self, model_name: str) -> str | None:
        return self._workspaces.composition(self.cwd).check_credentials(model_name)

    async def refresh_models(self, model_name: str) -> bool:
        """Ask the servers behind the picker (and `model_name`'s, for its window) for their
        models, if their cached lists are stale; True when the picker's list changed."""
        from earshot.model_lists import refresh

        return await refresh(self._workspaces.composition(self.cwd), model_name)

    def auth_status(self) -> dict[str, Any]:
        from earshot.auth_status import auth_status

        return auth_status(self._workspaces.composition(self.cwd))


class EarshotSessions:
    """`acp_server.ports.SessionMaker`: makes and reopens `AgentSession`s; MCP servers (the
    settings' and the editor's) are connected for every session, their long-lived tasks started
    in the session's block (`SessionIO.tasks`).

    Cheap to make: the session store loads at first use, so the first `session/new` is answered
    (`reserve`) before anything else has loaded."""

    def __init__(self, workspaces: EarshotWorkspaces) -> None:
        self._workspaces = workspaces
        self._store: SessionStore | None = None

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            from sessions.store import SessionStore

            # `process`: how another process that finds one of our sessions open names us.
            self._store = SessionStore(self._sessions_root(), process="earshot --stdio")
        return self._store

    def reserve(self, cwd: Path, additional_directories: Sequence[Path]) -> str:
        from earshot import __version__
        from sessions.ids import new_id
        from sessions.reserve import reserve

        session_id = new_id()
        # The cwd as `agent.session.creation.create_session` records it (resolved), so the
        # build adopts this file rather than refusing the id.
        try:
            reserve(
                self._sessions_root(),
                session_id=session_id,
                cwd=str(cwd.resolve()),
                additional_directories=[str(p.resolve()) for p in additional_directories],
                earshot_version=__version__,
            )
        except OSError as exc:
            from sessions import SessionWriteFailed

            raise SessionWriteFailed(str(self._sessions_root()), exc) from exc
        return session_id

    def release(self, session_id: str, cwd: Path) -> None:
        import os

        from sessions.reserve import cwd_hash, take_reserved_lock

        lock = self._sessions_root() / cwd_hash(cwd.resolve()) / f"{session_id}.lock"
        fd = take_reserved_lock(lock)
        if fd is not None:
            os.close(fd)

    async def open(self, opening: Opening) -> OpenedSession:
        from acp_server.ports import OpenedSession
        from earshot.compose import open_session

        cwd = opening.cwd
        composition = self._workspaces.composition(cwd)
        pick = composition.default_model()
        # A reopened session runs the transcript's own model: only a new one announces the pick.
        announce = pick.announcement() if opening.new else None
        io = opening.io
        agent = await open_session(
            composition,
            store=self.store,
            model_name=pick.name,
            notices=[announce] if announce else [],
            resume_id=None if opening.new else opening.session_id,
            new_id=opening.session_id if opening.new else None,
            additional_directories=opening.additional_directories,
            client_servers=opening.mcp_servers,
            mcp_channel=io.mcp,
            client_prompt=_client_prompt(opening),
            # A new session's are started after its warm-up (`tool_arrivals.begin()`), so that
            # the MCP SDK's import does not delay what its first prompt needs.
            start_mcp=not opening.new,
            tasks=io.tasks,
            files=io.files,
            processes=io.processes,
            interaction=io.interaction,
            current=lambda: self._workspaces.composition(cwd),
        )
        return OpenedSession(agent=agent, skills=self.skills(cwd), warm_up=self.warm_up(agent))

    def skills(self, cwd: Path) -> Sequence[SkillCommand]:
        """The skills offered as slash commands in `cwd`."""
        from acp_server.ports import SkillCommand
        from agent.session import discover_skills

        try:
            # What the session offers: the project's skills only in a trusted workspace, every
            # skill file through the read checks (agent.skills).
            index = discover_skills(cwd, self._workspaces.composition(cwd).settings)
        except (OSError, ValueError):
            return ()
        return [
            SkillCommand(name=skill.name, description=skill.description) for skill in index.skills
        ]

    def warm_up(self, session: AgentSession) -> Callable[[], None]:
        """`OpenedSession.warm_up` for `session`."""
        from providers.registry import first_call_warm_up

        composition = self._workspaces.composition(session.cwd)
        first_call = first_call_warm_up(
            session.model_name,
            user_providers=composition.user_providers,
            environ=self._workspaces.environ,
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

    def _sessions_root(self) -> Path:
        """Where the store keeps sessions (known before the store itself loads)."""
        if self._store is not None:
            return self._store.root
        from sessions.paths import data_dir

        return data_dir(self._workspaces.environ) / "sessions"


class EarshotProviders:
    """`acp_server.ports.ProviderAdmin`: the `providers/*` methods write the user settings
    (`earshot.provider_admin`), then the directory's settings are read again."""

    def __init__(self, workspaces: EarshotWorkspaces) -> None:
        self._workspaces = workspaces

    def list_providers(self, cwd: Path) -> list[dict[str, Any]]:
        from earshot.provider_admin import list_providers

        return list_providers(self._workspaces.composition(cwd))

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

        environ = self._workspaces.environ
        set_provider(_user_file(cwd, environ), provider_id, api_type, base_url, headers)
        self._workspaces.refresh(cwd)

    def disable_provider(self, cwd: Path, provider_id: str) -> None:
        from earshot.provider_admin import disable_provider
        from providers.registry import all_providers

        composition = self._workspaces.composition(cwd)
        known = {spec.id for spec in all_providers()} | set(composition.settings.providers)
        disable_provider(_user_file(cwd, self._workspaces.environ), provider_id, known)
        self._workspaces.refresh(cwd)


def earshot_ports(environ: Mapping[str, str] | None = None) -> Ports:
    """The server's ports, over one process environment (`environ`: the process's own)."""
    return _ports(EarshotWorkspaces(dict(os.environ if environ is None else environ)))


def _ports(workspaces: EarshotWorkspaces) -> Ports:
    from acp_server.ports import Ports

    return Ports(
        workspaces=workspaces,
        sessions=EarshotSessions(workspaces),
        providers=EarshotProviders(workspaces),
    )


def _client_prompt(opening: Opening) -> ClientPrompt | None:
    from agent.context import ClientPrompt

    given = opening.system_prompt
    return None if given is None else ClientPrompt(mode=given.mode, text=given.text)


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

    # The workspaces alone before the `initialize` reply (the sign-in method asks whether a key
    # is set); the rest of the ports, and the records they load, after it.
    workspaces = EarshotWorkspaces(dict(os.environ))
    return serve_stdio(workspaces=workspaces, ports=lambda: _ports(workspaces), version=__version__)


def main() -> int:
    """Entry for `python -m earshot.acp_main`."""
    return run_stdio()


if __name__ == "__main__":
    sys.exit(main())
