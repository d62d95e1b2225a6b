"""What a session is set up with, before its first turn: the options the composition root gives,
the model, and the collaborators built from the settings (I/O backends, the permission gate and
the command sandbox, hooks, undo, skills)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from agent.backends import MODES, FileBackend, Interaction, Mode, ProcessBackend
from agent.code import CodeIndexHost, EditChecks
from agent.commands import CommandSource
from agent.context import ClientPrompt
from agent.local import BackgroundJobs, LocalFiles, LocalProcesses
from agent.permissions import PermissionGate, PermissionRules, RuleBook
from agent.protected_paths import ProtectedPaths, protected_paths
from agent.sandbox import Sandbox, open_sandbox
from agent.settings import SandboxConfig, Settings, append_rule
from agent.skills import SkillIndex
from agent.tasks import SessionTasks
from agent.tool_env import add_credential_variables
from agent.tools import (
    TASK_TOOL_NAME,
    AnyTool,
    ReadTracker,
    ScopeContract,
    ToolServices,
    builtin_tool_names,
    builtin_tools,
    task_tool,
)
from agent.turn import HookRunner, Snapshot, Tooling, ToolSet
from agent.undo import UndoStore
from providers.logs import get_logger
from providers.records import MutableRecord
from providers.types import ReasoningEffort
from sessions import ExtensionEntry, ModelChangeEntry, Session, data_dir, extensions

if TYPE_CHECKING:
    from agent.events import AgentEvent
    from agent.session.tool_arrivals import ToolArrivals
    from agent.turn import AuditTrail
    from providers.model import Model

_log = get_logger(__name__)


class SessionOptions(MutableRecord):
    model_name: str
    """`provider/model`."""
    reasoning_effort: ReasoningEffort | None = None
    mode: Mode = "ask"
    max_turns: int = 200
    """Model calls per `run_turn`."""
    system_prompt: str | None = None
    """None: the built-in one."""
    client_prompt: ClientPrompt | None = None
    """The front end's instructions (ACP `systemPrompt`), with or in place of the built-in
    rules (`agent.context.system_prompt`); kept with the session (`remembered_prompt`), so a
    resumed session given none sends the same prompt."""
    extra_tools: Sequence[AnyTool] = ()
    """E.g. MCP tools from the composition root; a name already taken replaces that tool."""
    max_retries: int = 4
    retry_base_delay: float = 1.0
    """Seconds; the jitter cap of the first retry (it doubles per retry)."""
    retry_max_delay: float = 60.0
    """No wait between retries is longer; a vendor asking for longer is not retried."""
    builtin_tools: bool = True
    """False: only `task` and `extra_tools` (tests and embedders that bring their own)."""
    notices: Sequence[str] = ()
    """Said once, as warnings at the start of the first turn (e.g. an MCP server that failed to
    start): the composition root learns them before any turn exists to carry them."""
    command_sources: Sequence[CommandSource] = ()
    """Slash commands beyond the built-ins (`agent.commands.sources`): the user's Markdown
    commands, MCP prompts, `/mcp`. Asked again whenever commands are listed or parsed."""
    model_choices: Callable[[], Sequence[str]] | None = None
    """The models `/model` with no argument lists (`provider/model`), as the picker offers them."""
    on_close: Sequence[Callable[[], Awaitable[None]]] = ()
    """Awaited by `aclose`, last (e.g. closing the MCP connections behind `extra_tools`)."""
    tool_arrivals: ToolArrivals | None = None
    """Tools that join after the session opened (MCP servers starting in the background), and
    what the user should hear of them (`agent.session.tool_arrivals`): the first turn waits for
    their `startup`, a tool joins at the next model request, at the end of the tool list."""


class ModelUnavailable(RuntimeError):
    """The model factory could not build the model (missing credentials, unknown provider...)."""


def build_model(factory: Callable[[str], Model], name: str) -> Model:
    """Raises: ModelUnavailable, saying why."""
    try:
        return factory(name)
    except Exception as exc:
        raise ModelUnavailable(f"cannot use model {name!r}: {exc}") from exc


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSetup:
    """The collaborators a session's turns use."""

    files: FileBackend
    processes: ProcessBackend
    gate: PermissionGate
    sandbox: Sandbox
    hooks: HookRunner | None
    undo: UndoStore | None
    skills: SkillIndex | None
    settings: Settings | None = None
    """What the session was set up from (`/permissions` lists and edits its rules)."""
    rule_book: RuleBook | None = None
    """The gate's file rules, which `/permissions` replaces after editing a file."""
    checks: EditChecks | None = None
    code_index: CodeIndexHost | None = None
    background: BackgroundJobs | None = None

    async def turn_started(
        self, prompt_text: str, reads: ReadTracker, emit: Callable[[AgentEvent], None]
    ) -> str | None:
        """At a turn's start: the code index's refresh (with `repoMap`), and the map for the
        system prompt the first time there is one."""
        host = self.code_index
        if host is None:
            return None
        await host.turn_started()
        repo_map = await host.system_prompt_map(
            prompt_text, list(reads.seen), self.gate.read_denied
        )
        host.announce(emit)  # after the map's bounded wait: by then a refresh knows its size
        return repo_map

    async def aclose(self) -> None:
        """Stop the background commands, the code index and the language servers; then remove
        the sandbox's private temp dir, which none of them uses any more."""
        with anyio.CancelScope(shield=True):
            if self.background is not None:
                await self.background.aclose()
            if self.code_index is not None:
                await self.code_index.aclose()
            if self.checks is not None:
                await self.checks.aclose()
            self.sandbox.close()

    def tooling(
        self,
        *,
        session_id: str,
        cwd: Path,
        roots: tuple[Path, ...],
        interaction: Interaction,
        mode: Callable[[], Mode],
        scope: ScopeContract,
        reads: ReadTracker,
        turn: anyio.CancelScope,
        snapshot: Snapshot,
        trail: AuditTrail | None = None,
    ) -> Tooling:
        """A turn's `Tooling`, with the services every tool may find: the skill index, and the
        `Read` deny rules' verdict on a path (search tools leave denied paths out of results)."""
        services = ToolServices(
            read_denied=self.gate.read_denied,
            read_deny_globs=self.gate.read_deny_globs,
            code_index=self.code_index,
            background=self.background,
        )
        return Tooling(
            session_id=session_id,
            cwd=cwd,
            roots=roots,
            files=self.files,
            processes=self.processes,
            interaction=interaction,
            gate=self.gate,
            mode=mode,
            scope=scope,
            reads=reads,
            turn=turn,
            services=services,
            sandbox=self.sandbox,
            hooks=self.hooks,
            snapshot=snapshot,
            checks=self.checks,
            trail=trail,
        )


async def set_up(
    *,
    cwd: Path,
    roots: Sequence[Path],
    settings: Settings | None,
    files: FileBackend | None,
    processes: ProcessBackend | None,
    data: Path | None,
    tasks: SessionTasks,
) -> SessionSetup:
    """Build what a session needs from settings, with local defaults for anything not given;
    what outlives its turns (language servers, index refreshes) runs in `tasks`, its block."""
    rules = PermissionRules() if settings is None else PermissionRules.from_settings(settings)
    processes = processes or LocalProcesses()
    remembered = None if settings is None else settings.remembered
    sandbox = await _sandbox(settings, roots)
    book = _rule_book(cwd, settings, rules)
    gate = PermissionGate(
        book,
        cwd=cwd,
        roots=roots,
        persist_rule=None if remembered is None else _persister(remembered),
        protected=_protected(roots, settings),
        sandbox=sandbox.status,
    )
    return SessionSetup(
        files=files or LocalFiles(),
        processes=processes,
        gate=gate,
        sandbox=sandbox,
        hooks=HookRunner(settings.hooks, cwd=cwd)
        if settings is not None and settings.hooks
        else None,
        undo=UndoStore(cwd, data if data is not None else data_dir()),
        skills=_skills(cwd, settings, gate),
        settings=settings,
        rule_book=book,
        checks=EditChecks(settings.code, cwd, tasks, sandbox)
        if settings is not None and (settings.code.verify or settings.code.lsp)
        else None,
        background=BackgroundJobs(cwd, processes),
        code_index=CodeIndexHost(
            cwd,
            data_dir=data,
            repo_map=settings is not None and settings.code.repo_map,
            tasks=tasks,
        ),
    )


async def _sandbox(settings: Settings | None, roots: Sequence[Path]) -> Sandbox:
    """The command sandbox the settings ask for (on, with the network, when there are none), and
    the keys of the providers they define scrubbed from every command's environment."""
    if settings is None:
        return await open_sandbox(SandboxConfig(), roots)
    add_credential_variables(
        entry.api_key_env for entry in settings.providers.values() if entry.api_key_env
    )
    return await open_sandbox(settings.sandbox, roots)


def _protected(roots: Sequence[Path], settings: Settings | None) -> ProtectedPaths:
    # The user's own settings files where this session reads them (a `config_home` other than
    # the environment's, in tests and embedders): protected and secret like the default ones.
    remembered = None if settings is None else settings.remembered
    own = (
        ()
        if remembered is None
        else (remembered.parent.parent / "settings.json", remembered.parent)
    )
    return protected_paths(roots, settings_files=own)


def _rule_book(cwd: Path, settings: Settings | None, rules: PermissionRules) -> RuleBook:
    """The session's rules, read again when one of their files changes (an "always" answer or
    a revoke in another session: `RuleBook.refresh`); fixed for settings not read from files."""
    if settings is None or settings.remembered is None:
        return RuleBook(rules)
    from agent.permissions import scope_paths, settings_reloader

    reload = settings_reloader(cwd, settings)
    return RuleBook(
        rules,
        reload=lambda: PermissionRules.from_settings(reload()),
        files=tuple(scope_paths(settings, cwd).values()),
    )


def _persister(remembered: Path) -> Callable[[str, str], None]:
    """Saves "always" answers to the user's remembered file for the project
    (`agent.settings.trust`)."""

    def persist(list_name: str, rule: str) -> None:
        if list_name not in ("allow", "ask", "deny"):
            raise ValueError(f"unknown permission list {list_name!r}")
        append_rule(remembered, list_name, rule)

    return persist


def own_commands(cwd: Path, setup: SessionSetup) -> CommandSource:
    """The user's Markdown commands (`agent.commands.user`), read through the gate's checks."""
    from agent.commands import user_commands_source

    settings = setup.settings
    remembered = None if settings is None else settings.remembered
    gate = setup.gate
    return user_commands_source(
        cwd=cwd,
        config_home=None if remembered is None else remembered.parent.parent.parent,
        trusted=settings is not None and settings.trusted,
        readable=lambda path: not gate.read_denied(path),
    )


def _skills(cwd: Path, settings: Settings | None, gate: PermissionGate) -> SkillIndex | None:
    try:
        return discover_skills(cwd, settings, gate)
    except Exception:
        _log.warning("skill discovery failed", exc_info=True)
        return None


def discover_skills(
    cwd: Path, settings: Settings | None, gate: PermissionGate | None = None
) -> SkillIndex:
    """The skills a session in `cwd` offers: the project's only in a trusted workspace
    (`agent.settings.trust`), every skill file through the read checks of `gate` (by default, one
    built from `settings`). For the session, and for the editor's slash-command list.

    Raises:
        ValueError: a permission rule in `settings` is malformed.
    """
    if gate is None:
        rules = PermissionRules() if settings is None else PermissionRules.from_settings(settings)
        gate = PermissionGate(rules, cwd=cwd, roots=[cwd], protected=_protected([cwd], settings))
    checked = gate

    def readable(path: Path) -> bool:
        return not checked.read_denied(path)

    trusted = settings is not None and settings.trusted
    return SkillIndex.discover(cwd, project=trusted, readable=readable)


async def resumed_settings(
    stored: Session, options: SessionOptions, build: Callable[[str], Model]
) -> tuple[str, ReasoningEffort | None, Mode, Model]:
    """Model, effort and mode of a resumed session (as recorded), and its model built. A recorded
    model that can no longer be built (credentials gone...) gives way to the configured one.

    Raises:
        Exception: whatever `build` raised for the configured model.
    """
    mode: Mode = options.mode
    for known in MODES:
        if known == stored.mode:
            mode = known
    if stored.model is not None:
        try:
            return stored.model, stored.reasoning_effort, mode, build(stored.model)
        except Exception:
            if stored.model == options.model_name:
                raise
    model = build(options.model_name)
    if stored.writable:  # read-only here (another process has it open): kept in memory only
        await stored.append(
            ModelChangeEntry(model=options.model_name, reasoning_effort=options.reasoning_effort)
        )
    return options.model_name, options.reasoning_effort, mode, model


async def remembered_prompt(stored: Session, given: ClientPrompt | None) -> ClientPrompt | None:
    """The instructions a session runs with: `given` (recorded when it differs from the last
    recorded one), else the last recorded, on any branch (`/clear` keeps it)."""
    recorded: ClientPrompt | None = None
    for entry in reversed(stored.entries):
        if isinstance(entry, ExtensionEntry) and entry.name == extensions.CLIENT_PROMPT:
            data = entry.data if isinstance(entry.data, dict) else {}
            mode, text = data.get("mode"), data.get("text")
            if mode in ("append", "override") and isinstance(text, str):
                recorded = ClientPrompt(
                    mode="append" if mode == "append" else "override", text=text
                )
            break
    if given is None or given == recorded:
        return recorded
    if stored.writable:  # read-only here (another process has it open): kept in memory only
        await stored.append(
            ExtensionEntry(
                name=extensions.CLIENT_PROMPT, data={"mode": given.mode, "text": given.text}
            )
        )
    return given


def session_tools(options: SessionOptions, setup: SessionSetup) -> ToolSet:
    """What the model may call: the built-in tools (unless the options leave them out), `task`,
    and the composition's tools, in that order (the order is part of the cached prompt prefix)."""
    extra = list(options.extra_tools)
    builtins = options.builtin_tools
    return ToolSet(
        names=[
            *(builtin_tool_names(skills=setup.skills) if builtins else ()),
            TASK_TOOL_NAME,
            *(tool.name for tool in extra),
        ],
        # Loaded at the first turn (or replay), not while the session is being answered.
        load=lambda: [
            *(builtin_tools(skills=setup.skills) if builtins else ()),
            task_tool(),
            *extra,
        ],
    )
