"""The collaborators a session is assembled from: I/O backends, the permission gate, hooks, undo
and skills. Kept apart from `agent.session` so the session reads as the conversation it runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.backends import MODES, FileBackend, Mode, ProcessBackend
from agent.events import PlanEntry, UsageUpdated
from agent.execution import Hooks
from agent.permissions import PermissionGate, PermissionRules
from agent.tools.base import AnyTool
from agent.tools.task import task_tool
from providers.logs import get_logger
from providers.types import ImagePart, Message, ReasoningEffort, TextPart, Usage
from sessions import ExtensionEntry, ModelChangeEntry, Session, UndoSnapshotEntry, new_id

if TYPE_CHECKING:
    from agent.protected_paths import ProtectedPaths
    from agent.sandbox import Sandbox
    from agent.session import SessionOptions
    from agent.settings import Settings
    from agent.skills import SkillIndex
    from agent.undo import UndoStore
    from providers.catalog import ModelInfo
    from providers.model import Model

_log = get_logger(__name__)

HOOK_TIMEOUT_SECONDS = 30.0
TITLE_LIMIT = 60
PLAN_EXTENSION = "plan"


@dataclass(kw_only=True)
class SessionParts:
    stored: Session
    cwd: Path
    files: FileBackend
    processes: ProcessBackend
    gate: PermissionGate
    hooks: Hooks | None
    undo: UndoStore | None
    skills: SkillIndex | None
    sandbox: Sandbox | None = None
    _notice_given: bool = field(default=False)

    def builtin_tools(self, include_builtins: bool) -> list[AnyTool]:
        tools: list[AnyTool] = []
        if include_builtins:
            from agent.tools import builtin_tools

            tools.extend(builtin_tools(skills=self.skills))
        tools.append(task_tool)
        return tools

    def tool_services(self) -> dict[str, Any]:
        """What tools find in `ctx.services` from the start: the skill index, and the `Read`
        deny rules' verdict on a path, so search tools leave denied paths out of results."""
        from agent.tools._common import READ_DENIED, READ_DENY_GLOBS

        return {
            "skills": self.skills,
            READ_DENIED: self.gate.read_denied,
            READ_DENY_GLOBS: self.gate.read_deny_globs,
        }

    def startup_notices(self) -> list[str]:
        """What the user should hear once per session: no command sandbox, undo unavailable."""
        if self._notice_given:
            return []
        self._notice_given = True
        notices: list[str] = []
        sandbox_notice = self.sandbox.notice() if self.sandbox is not None else None
        if sandbox_notice is not None:
            notices.append(sandbox_notice)
        if self.undo is not None and not self.undo.available:
            notices.append(self.undo.unavailable_reason or "undo is unavailable")
        return notices

    async def snapshot(self, paths: Sequence[Path], whole_tree: bool = False) -> None:
        """Snapshot `paths` (with `whole_tree`: the work tree too) before a batch of mutating
        calls, and record it in the session."""
        undo = self.undo
        if undo is None or not undo.available:
            return
        batch_id = new_id()
        snapshot = await undo.snapshot(self.stored.id, batch_id, paths, whole_tree=whole_tree)
        if snapshot is None:
            return
        shown = [self._relative(p) for p in paths]
        if whole_tree:
            shown = [".", *(name for name in shown if name.startswith("/"))]
        await self.stored.append(
            UndoSnapshotEntry(snapshot=snapshot, batch_id=batch_id, paths=shown)
        )

    async def undo_last(self) -> str:
        if self.undo is None:
            return "Undo is not available in this session."
        result = await self.undo.undo_last(self.stored.id)
        return result.message

    async def prompt_hook(self, prompt: str) -> str | None:
        """None when the prompt may go ahead, else why a hook blocked it."""
        hooks: Any = self.hooks
        if hooks is None:
            return None
        try:
            verdict = await hooks.user_prompt_submit(session_id=self.stored.id, prompt=prompt)
        except Exception as exc:
            _log.warning("user_prompt_submit hook failed", exc_info=True)
            return f"a user_prompt_submit hook failed: {exc}"
        if getattr(verdict, "blocked", False):
            return getattr(verdict, "reason", None) or "blocked by a user_prompt_submit hook"
        return None

    async def stop_hook(self, reason: str) -> None:
        hooks: Any = self.hooks
        if hooks is None:
            return
        import anyio

        try:
            with anyio.move_on_after(HOOK_TIMEOUT_SECONDS):
                await hooks.stop(session_id=self.stored.id, reason=reason)
        except Exception:
            _log.warning("stop hook failed", exc_info=True)

    def _relative(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.cwd))
        except ValueError:
            return str(path)


async def assemble_parts(
    *,
    stored: Session,
    cwd: Path,
    roots: Sequence[Path],
    settings: Settings | None,
    files: FileBackend | None,
    processes: ProcessBackend | None,
    data_dir: Path | None,
) -> SessionParts:
    """Build what a session needs from settings, with local defaults for anything not given."""
    if files is None or processes is None:
        from agent.local import LocalFiles, LocalProcesses

        files = files or LocalFiles()
        processes = processes or LocalProcesses()
    rules = PermissionRules() if settings is None else PermissionRules.from_settings(settings)
    remembered = None if settings is None else settings.remembered
    sandbox = await _sandbox(settings, roots)
    gate = PermissionGate(
        rules,
        cwd=cwd,
        roots=roots,
        persist_rule=None if remembered is None else _persister(remembered),
        protected=_protected(roots, settings),
        sandbox=sandbox.status,
    )
    return SessionParts(
        stored=stored,
        cwd=cwd,
        files=files,
        processes=processes,
        gate=gate,
        hooks=_hooks(settings, cwd),
        undo=_undo(cwd, data_dir),
        skills=_skills(cwd, settings, gate),
        sandbox=sandbox,
    )


async def _sandbox(settings: Settings | None, roots: Sequence[Path]) -> Sandbox:
    """The command sandbox the settings ask for (on, with the network, when there are none), and
    the keys of the providers they define scrubbed from every command's environment."""
    from agent.sandbox import open_sandbox
    from agent.sandbox_config import SandboxConfig
    from agent.tool_env import add_credential_variables

    if settings is None:
        return await open_sandbox(SandboxConfig(), roots)
    add_credential_variables(
        entry.api_key_env for entry in settings.providers.values() if entry.api_key_env
    )
    return await open_sandbox(settings.sandbox, roots)


def _protected(roots: Sequence[Path], settings: Settings | None) -> ProtectedPaths:
    from agent.protected_paths import protected_paths

    # The user's own settings files where this session reads them (a `config_home` other than
    # the environment's, in tests and embedders): protected and secret like the default ones.
    remembered = None if settings is None else settings.remembered
    own = (
        ()
        if remembered is None
        else (remembered.parent.parent / "settings.json", remembered.parent)
    )
    return protected_paths(roots, settings_files=own)


def _persister(remembered: Path) -> Callable[[str, str], None]:
    """Saves "always" answers to the user's remembered file for the project (`agent.trust`)."""
    from agent.settings import append_rule

    def persist(list_name: str, rule: str) -> None:
        if list_name not in ("allow", "ask", "deny"):
            raise ValueError(f"unknown permission list {list_name!r}")
        append_rule(remembered, list_name, rule)

    return persist


def _hooks(settings: Settings | None, cwd: Path) -> Hooks | None:
    if settings is None or not settings.hooks:
        return None
    from agent.hooks import HookRunner

    return HookRunner(settings.hooks, cwd=cwd)


def _undo(cwd: Path, data_dir: Path | None) -> UndoStore | None:
    from agent.undo import UndoStore
    from sessions import data_dir as default_data_dir

    return UndoStore(cwd, data_dir if data_dir is not None else default_data_dir())


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
    (`agent.trust`), every skill file through the read checks of `gate` (by default, one built
    from `settings`). For the session, and for the editor's slash-command list.

    Raises:
        ValueError: a permission rule in `settings` is malformed.
    """
    from agent.skills import SkillIndex

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


def title_from(text: str) -> str | None:
    """A session title from a prompt: its first non-empty line, at most ~60 characters, cut at
    a word boundary."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    line = " ".join(line.split())
    if not line:
        return None
    if len(line) <= TITLE_LIMIT:
        return line
    cut = line[:TITLE_LIMIT]
    space = cut.rfind(" ")
    if space >= TITLE_LIMIT // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:") + "…"


def restored_plan(stored: Session) -> tuple[PlanEntry, ...]:
    for entry in reversed(stored.path_entries()):
        if isinstance(entry, ExtensionEntry) and entry.name == PLAN_EXTENSION:
            return plan_from_json(entry.data)
    return ()


def plan_from_json(data: object) -> tuple[PlanEntry, ...]:
    """A plan from its persisted form; malformed items are skipped."""
    if not isinstance(data, list):
        return ()
    entries: list[PlanEntry] = []
    for item in data:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(item, dict):
            continue
        content = item.get("content")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        status = item.get("status", "pending")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        priority = item.get("priority", "medium")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if not isinstance(content, str):
            continue
        if status not in ("pending", "in_progress", "completed"):
            status = "pending"
        if priority not in ("high", "medium", "low"):
            priority = "medium"
        entries.append(PlanEntry(content=content, status=status, priority=priority))
    return tuple(entries)


class UsageMeter:
    """The session's token totals and cost. The cost becomes None (unknown, not zero) as soon as
    one call's price is unknown."""

    def __init__(self) -> None:
        self.total = Usage()
        self.cost: float | None = 0.0
        self.context_tokens = 0

    def add(
        self, usage: Usage | None, info: ModelInfo | None, *, context_tokens: int | None = None
    ) -> UsageUpdated:
        call = usage or Usage()
        self.total = self.total + call
        if context_tokens is not None:
            self.context_tokens = context_tokens
        if self.cost is not None:
            call_cost = None
            if info is not None and usage is not None:
                from providers.catalog import cost_usd

                call_cost = cost_usd(info, usage)
            self.cost = None if call_cost is None else self.cost + call_cost
        return UsageUpdated(
            call=call,
            total=self.total,
            context_tokens=self.context_tokens,
            context_window=info.context_window if info is not None else None,
            cost_usd=self.cost,
        )


def prompt_message(
    prompt: str | Sequence[TextPart | ImagePart], model_name: str, info: ModelInfo | None
) -> Message:
    """The user message for `prompt`, refused (ValueError) when this model cannot take it: an
    image for a model the catalog knows has no vision. Unknown models get the benefit of the
    doubt."""
    parts: list[TextPart | ImagePart] = (
        [TextPart(text=prompt)] if isinstance(prompt, str) else list(prompt)
    )
    if not parts:
        raise ValueError("the prompt is empty")
    has_image = any(isinstance(part, ImagePart) for part in parts)
    if has_image and info is not None and info.in_catalog and not info.vision:
        raise ValueError(
            f"{model_name} does not accept images: remove the image or switch to a model with "
            "vision"
        )
    return Message(role="user", parts=parts)
