"""The agent session: what ACP and the CLI drive.

`run_turn` streams `AgentEvent`s while the turn's work runs in a producer task. Consume it to the
end, or inside `contextlib.aclosing(...)` when you may stop early: closing it stops the turn and
settles the transcript (stopping without closing leaves the turn's task group to the garbage
collector, which cannot end it cleanly).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from agent.backends import MODES, DenyingInteraction, FileBackend, Interaction, Mode, ProcessBackend
from agent.context import CompactionResult, ContextShaper, ShapeContext
from agent.events import (
    AgentEvent,
    CompactionFinished,
    CompactionStarted,
    ModeChanged,
    ModelChanged,
    Notice,
    PlanChanged,
    PlanEntry,
    TitleChanged,
    TurnEnded,
    TurnStarted,
    UsageUpdated,
)
from agent.execution import CallSinks, ToolExecutor
from agent.loop import Emit, TurnLoop
from agent.prompt import build_system_prompt
from agent.replay import replay_events
from agent.retry import RetryPolicy
from agent.session_parts import (
    PLAN_EXTENSION,
    SessionParts,
    assemble_parts,
    prompt_message,
    restored_plan,
    resumed_settings,
    title_from,
)
from agent.tools.base import AnyTool, ReadTracker, ScopeContract, ToolContext
from agent.tools.task import SubagentRunner
from agent.usage import UsageTracker
from providers.types import (
    ImagePart,
    Message,
    ReasoningEffort,
    TextPart,
    ToolSpec,
    Usage,
)
from sessions import (
    ExtensionEntry,
    MessageEntry,
    ModeChangeEntry,
    ModelChangeEntry,
    Session,
    SessionStore,
    TitleEntry,
)

if TYPE_CHECKING:
    from agent.settings import Settings
    from providers.catalog import ModelCatalog, ModelInfo
    from providers.model import Model


Prompt = str | Sequence[TextPart | ImagePart]
_CLOSE_WAIT_SECONDS = 10.0


@dataclass(kw_only=True)
class SessionOptions:
    model_name: str
    """`provider/model`."""
    reasoning_effort: ReasoningEffort | None = None
    mode: Mode = "ask"
    max_turns: int = 200
    """Model calls per `run_turn`."""
    system_prompt: str | None = None
    """None: the built-in one."""
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
    on_close: Sequence[Callable[[], Awaitable[None]]] = ()
    """Awaited by `aclose`, last (e.g. closing the MCP connections behind `extra_tools`)."""


class UnsupportedPrompt(ValueError):
    """The prompt cannot be sent to this model (e.g. an image for a model without vision).
    Raised by `run_turn` and `queue_prompt` before anything is appended."""


class ModelUnavailable(RuntimeError):
    """The model factory could not build the model (missing credentials, unknown provider...)."""


def _build_model(factory: Callable[[str], Model], name: str) -> Model:
    try:
        return factory(name)
    except Exception as exc:
        raise ModelUnavailable(f"cannot use model {name!r}: {exc}") from exc


async def create_session(
    *,
    store: SessionStore,
    cwd: Path,
    options: SessionOptions,
    model_factory: Callable[[str], Model],
    catalog: ModelCatalog | None = None,
    settings: Settings | None = None,
    files: FileBackend | None = None,
    processes: ProcessBackend | None = None,
    interaction: Interaction | None = None,
    additional_directories: Sequence[Path] = (),
    resume_id: str | None = None,
    promised_id: str | None = None,
    data_dir: Path | None = None,
) -> AgentSession:
    """Start a new session, or resume `resume_id` (its history, model, mode, title and plan come
    back; permission grants do not). `promised_id` is the id a new session gets when a front end
    already announced one (minted with `sessions.ids.new_id`).

    Raises:
        ModelUnavailable: the model cannot be built.
        sessions.SessionNotFound: `resume_id` names no session.
    """
    cwd = cwd.resolve()
    extra_roots = [path.resolve() for path in additional_directories]
    if resume_id is None:
        model = _build_model(model_factory, options.model_name)
        stored = await store.create(
            cwd, additional_directories=[str(p) for p in extra_roots], session_id=promised_id
        )
        model_name, effort, mode = options.model_name, options.reasoning_effort, options.mode
        try:
            await stored.append(ModelChangeEntry(model=model_name, reasoning_effort=effort))
            await stored.append(ModeChangeEntry(mode=mode))
        except BaseException:
            with anyio.CancelScope(shield=True):
                await stored.aclose()  # its writer lock with it
            raise
    else:
        stored = await store.open(resume_id)
        try:
            model_name, effort, mode, model = await resumed_settings(
                stored, options, lambda name: _build_model(model_factory, name)
            )
        except BaseException:
            await stored.aclose()
            raise
        for directory in stored.header.additional_directories:
            if Path(directory) not in extra_roots:
                extra_roots.append(Path(directory))
    roots = (cwd, *(root for root in extra_roots if root != cwd))
    try:
        parts = await assemble_parts(
            stored=stored,
            cwd=cwd,
            roots=roots,
            settings=settings,
            files=files,
            processes=processes,
            data_dir=data_dir,
        )
    except BaseException:
        # Failed or cancelled (the front end stopped): the session file's writer lock must not
        # outlive the attempt (a front end in a longer-lived process opens the session again).
        with anyio.CancelScope(shield=True):
            await stored.aclose()
        raise
    return AgentSession(
        stored=stored,
        options=options,
        model=model,
        model_name=model_name,
        reasoning_effort=effort,
        mode=mode,
        model_factory=model_factory,
        catalog=catalog,
        interaction=interaction or DenyingInteraction(),
        roots=roots,
        parts=parts,
    )


class AgentSession:
    """One conversation: its transcript, model, mode, tools and the turn running in it."""

    def __init__(
        self,
        *,
        stored: Session,
        options: SessionOptions,
        model: Model,
        model_name: str,
        reasoning_effort: ReasoningEffort | None,
        mode: Mode,
        model_factory: Callable[[str], Model],
        catalog: ModelCatalog | None,
        interaction: Interaction,
        roots: tuple[Path, ...],
        parts: SessionParts,
    ) -> None:
        self._stored = stored
        self._options = options
        self._model = model
        self._model_factory = model_factory
        self._catalog = catalog
        self._interaction = interaction
        self._parts = parts
        self.id = stored.id
        self.cwd = roots[0]
        self.roots = roots
        self.mode: Mode = mode
        self.model_name = model_name
        self.reasoning_effort: ReasoningEffort | None = reasoning_effort
        self.title: str | None = stored.title
        self.plan: tuple[PlanEntry, ...] = restored_plan(stored)
        self.model_info: ModelInfo | None = self._lookup_info(model)
        self.running = False
        self._scope_contract = ScopeContract()
        self._reads = ReadTracker()
        self._usage = UsageTracker(model_info=self.model_info)
        self._usage.restore(stored.path_entries())
        self._shaper = ContextShaper(usage=self._usage)
        self._retry = RetryPolicy(
            max_retries=options.max_retries,
            base_delay=options.retry_base_delay,
            max_delay=options.retry_max_delay,
        )
        tools: dict[str, AnyTool] = {}
        for tool in (*parts.builtin_tools(options.builtin_tools), *options.extra_tools):
            tools[tool.name] = tool
        self._tools = tools
        # Built at the first request: the input schemas cost more than the rest of the session.
        self._tool_specs: list[ToolSpec] | None = None
        self._system_prompt = options.system_prompt or build_system_prompt(
            cwd=self.cwd, roots=roots, tool_names=list(tools)
        )
        self._queue: list[Message] = []
        self._accepting = False
        self._turn_scope: anyio.CancelScope | None = None
        self._turn_done = anyio.Event()
        self._emit: Emit | None = None
        self._services: dict[str, Any] = parts.tool_services()
        self._notices_said = False

    # ------------------------------------------------------------------------ public API

    def run_turn(self, prompt: Prompt) -> AsyncGenerator[AgentEvent, None]:
        """Run one user turn, streaming its events; the last one is `TurnEnded`.

        Raises (at once, before anything is recorded):
            UnsupportedPrompt: the prompt cannot go to this model.
            RuntimeError: a turn is already running (queue the prompt instead).
        """
        if self.running:
            raise RuntimeError("a turn is already running: queue the prompt or cancel the turn")
        # Looked up again: a server may have reported the model's window since (the catalog
        # learns it in the background).
        self.model_info = self._usage.model_info = self._lookup_info(self._model)
        message = self._prompt_message(prompt)
        self.running = True
        self._accepting = True
        self._turn_done = anyio.Event()
        self._turn_scope = anyio.CancelScope()
        return self._turn(message, self._turn_scope)

    async def ensure_writable(self) -> None:
        """Be the session's writer (before a turn or a change): a session another process has
        open is read-only here; once it has let go, this takes it over (`Session.claim`).

        Raises:
            sessions.SessionBusy: another process has it open (the message names it).
            sessions.SessionWriteFailed: the data dir cannot be written.
        """
        if not self._stored.writable:  # no await otherwise: a change applies at once
            await self._stored.claim()

    def queue_prompt(self, prompt: Prompt) -> bool:
        """Queue a prompt into the running turn: like the turn's first prompt it goes through
        the user_prompt_submit hooks (blocked: dropped, with a `Notice`), then is sent after the
        current tool batch, before the next model call (never mid-batch). A prompt queued while
        the model streams its final answer makes the loop call the model once more.

        Returns False, recording nothing, when no turn is running or the running one is ending
        (the model has answered for the last time; the stop hook may still run): the caller
        starts a new turn with it (`run_turn`) once this one has ended. A prompt accepted into a
        turn that is then cancelled, fails or runs out of model calls is kept in history (after
        the hooks) and answered by the next turn.

        Raises:
            UnsupportedPrompt: the prompt cannot go to this model.
        """
        if not (self.running and self._accepting):
            return False
        self._queue.append(self._prompt_message(prompt))
        return True

    def cancel(self) -> None:
        """Stop the running turn: model stream closed, tools cancelled, unfinished calls answered
        "interrupted"; `run_turn` then yields its last events and `TurnEnded("cancelled")`."""
        if self._turn_scope is not None:
            self._turn_scope.cancel()

    async def set_mode(self, mode: Mode) -> None:
        """Switch the permission mode (takes effect at the next permission check)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        if mode == self.mode:
            return
        await self.ensure_writable()
        self.mode = mode
        await self._stored.append(ModeChangeEntry(mode=mode))
        self._notify(ModeChanged(mode=mode))

    async def set_model(
        self, model_name: str, reasoning_effort: ReasoningEffort | None = None
    ) -> None:
        """Switch model (and reasoning effort); takes effect at the next model call.

        Raises:
            ModelUnavailable: the model cannot be built; the current one stays.
            sessions.SessionBusy: another process has the session open; nothing changes.
        """
        await self.ensure_writable()
        model = _build_model(self._model_factory, model_name)
        old = self._model
        self._model = model
        self.model_name = model_name
        self.reasoning_effort = reasoning_effort
        self.model_info = self._lookup_info(model)
        self._usage.model_info = self.model_info
        await self._stored.append(
            ModelChangeEntry(model=model_name, reasoning_effort=reasoning_effort)
        )
        self._notify(ModelChanged(model=model_name, reasoning_effort=reasoning_effort))
        if old is not model:
            await old.aclose()

    async def compact(self, instructions: str | None = None) -> AsyncGenerator[AgentEvent, None]:
        """Summarise the conversation so far (the `/compact` command)."""
        if self.running:
            raise RuntimeError("cannot compact while a turn is running")
        compaction_id = uuid.uuid4().hex
        yield CompactionStarted(compaction_id=compaction_id, manual=True)
        events: list[AgentEvent] = []
        ctx = ShapeContext(
            model=self._model,
            model_info=self.model_info,
            context_tokens=self._usage.context_tokens,
            emit=events.append,
            session=self._stored,
            system=self._system_prompt,
            tools=self.tool_specs,
        )
        calls = self._usage.calls
        result: CompactionResult = await self._shaper.compact(
            self._stored.history(), ctx, instructions=instructions
        )
        if self._usage.calls != calls:
            # The summary calls cost something; no model call may follow to record them.
            await self._persist_usage()
        for event in events:
            yield event
        yield CompactionFinished(
            compaction_id=compaction_id,
            ok=result.ok,
            summary=result.summary,
            error=result.error,
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
        )

    async def undo(self) -> str:
        """Restore the files changed by this session's last tool batch; says what happened."""
        return await self._parts.undo_last()

    def replay_events(self) -> list[AgentEvent]:
        """The conversation on the current path as events (ACP `session/load`)."""
        return replay_events(self._stored.path_entries(), self._tools, self._replay_context())

    async def aclose(self) -> None:
        """Stop a running turn (waiting briefly for it to settle) and release the model and
        the session file."""
        if self.running:
            self.cancel()
            with anyio.move_on_after(_CLOSE_WAIT_SECONDS):
                await self._turn_done.wait()
        try:
            await self._model.aclose()
            await self._stored.aclose()
        finally:
            for close in self._options.on_close:
                await close()

    # ---------------------------------------------------------------------- the turn task

    async def _turn(
        self, message: Message, scope: anyio.CancelScope
    ) -> AsyncGenerator[AgentEvent, None]:
        send, receive = anyio.create_memory_object_stream[AgentEvent](math.inf)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._produce, message, send, scope)
                try:
                    while True:
                        # Drain without a checkpoint per event: the producer's own awaits
                        # already give way, and a checkpoint per text delta dominates the cost.
                        try:
                            event = receive.receive_nowait()
                        except anyio.WouldBlock:
                            try:
                                event = await receive.receive()
                            except anyio.EndOfStream:
                                break
                        except anyio.EndOfStream:
                            break
                        yield event
                except GeneratorExit:
                    # The consumer closed us: stop the turn, let it settle, end quietly.
                    scope.cancel()
        finally:
            receive.close()
            self.running = False
            self._turn_scope = None
            self._turn_done.set()

    async def _produce(
        self,
        message: Message,
        send: MemoryObjectSendStream[AgentEvent],
        scope: anyio.CancelScope,
    ) -> None:
        with send:
            emit = send.send_nowait
            self._emit = emit
            self._services["plan"] = self._publish_plan
            self._services["subagent"] = SubagentRunner(self, emit=emit, cancel_turn=scope.cancel)
            try:
                emit(TurnStarted(turn_id=uuid.uuid4().hex))
                for notice in self._parts.startup_notices():
                    emit(Notice(severity="warning", message=notice))
                for text in self._options.notices if not self._notices_said else ():
                    emit(Notice(severity="warning", message=text))
                self._notices_said = True
                loop = TurnLoop(self, emit=emit, scope=scope)
                end = await loop.run(message)
                # The loop closed the queue when it stopped (`close_queue`): nothing queued
                # can be waiting here for an answer that would never come.
                with anyio.CancelScope(shield=True):
                    await self._parts.stop_hook(end.reason)
                emit(end)
            finally:
                self._accepting = False
                self._emit = None

    def _notify(self, event: AgentEvent) -> None:
        if self._emit is not None:
            self._emit(event)

    # ----------------------------------------------------------------- LoopHost protocol

    @property
    def model(self) -> Model:
        return self._model

    @property
    def system_prompt(self) -> str:
        return self._system_prompt

    @property
    def tools(self) -> dict[str, AnyTool]:
        return self._tools

    @property
    def tool_specs(self) -> Sequence[ToolSpec]:
        if self._tool_specs is None:
            self._tool_specs = [
                ToolSpec(name=t.name, description=t.description, input_schema=t.input_schema)
                for t in self._tools.values()
            ]
        return self._tool_specs

    @property
    def max_turns(self) -> int:
        return self._options.max_turns

    @property
    def retry_policy(self) -> RetryPolicy:
        return self._retry

    @property
    def shaper(self) -> ContextShaper:
        return self._shaper

    @property
    def persisted_session(self) -> Session | None:
        return self._stored

    def history(self) -> list[Message]:
        return self._stored.history()

    async def append_message(self, message: Message, entry_id: str | None = None) -> str:
        entry = await self._stored.append(MessageEntry(message=message, id=entry_id or ""))
        return entry.id

    def take_queued(self) -> list[Message]:
        queued, self._queue = self._queue, []
        return queued

    def has_queued(self) -> bool:
        return bool(self._queue)

    def close_queue(self) -> None:
        self._accepting = False

    async def accept_prompt(self, message: Message) -> str | None:
        return await self._parts.prompt_hook(message.text)

    async def prompt_appended(self, message: Message, entry_id: str) -> None:
        if self.title is not None:
            return
        title = title_from(message.text)
        if title is None:
            return
        self.title = title
        with anyio.CancelScope(shield=True):
            await self._stored.append(TitleEntry(title=title))
        self._notify(TitleChanged(title=title))

    async def record_usage(self, usage: Usage | None, context_tokens: int) -> None:
        self.model_info = self._usage.model_info = self._lookup_info(self._model)
        # The shaper's account pairs the usage with the request it measured.
        context = self._shaper.observe(usage)
        self._notify(self._usage.record(usage, context_tokens=context))
        await self._persist_usage()

    def usage_so_far(self) -> UsageUpdated | None:
        """The totals as they stand (restored on resume), as a model call reports them; None
        while nothing has been counted (a new session)."""
        event = self._usage.event(Usage())
        if event.total == Usage() and event.context_tokens == 0:
            return None
        return event

    async def record_subagent_usage(self, usage: Usage | None) -> None:
        """A subagent's model call: it counts towards the session's total and cost."""
        self._notify(self._usage.record(usage))
        await self._persist_usage()

    def tool_context(self, sinks: CallSinks) -> ToolContext:
        return ToolContext(
            session_id=self.id,
            call_id=sinks.call_id,
            cwd=self.cwd,
            roots=self.roots,
            files=self._parts.files,
            processes=self._parts.processes,
            interaction=self._interaction,
            scope=self._scope_contract,
            reads=self._reads,
            progress=sinks.progress,
            terminal=sinks.terminal,
            services=self._services,
            sandbox=self._parts.sandbox,
        )

    def executor(self, emit: Emit, cancel_turn: Callable[[], None]) -> ToolExecutor:
        return ToolExecutor(
            session_id=self.id,
            gate=self._parts.gate,
            interaction=self._interaction,
            scope=self._scope_contract,
            mode=lambda: self.mode,
            emit=emit,
            cancel_turn=cancel_turn,
            hooks=self._parts.hooks,
            snapshot=self._parts.snapshot,
        )

    # --------------------------------------------------------------------------- helpers

    def _lookup_info(self, model: Model) -> ModelInfo | None:
        if self._catalog is None:
            return None
        return self._catalog.get(model.provider_id, model.model_id)

    def _prompt_message(self, prompt: Prompt) -> Message:
        try:
            return prompt_message(prompt, self.model_name, self.model_info)
        except ValueError as exc:
            raise UnsupportedPrompt(str(exc)) from None

    async def _publish_plan(self, entries: tuple[PlanEntry, ...]) -> None:
        self.plan = entries
        self._notify(PlanChanged(entries=entries))
        data: list[Any] = [
            {"content": e.content, "status": e.status, "priority": e.priority} for e in entries
        ]
        with anyio.CancelScope(shield=True):
            await self._stored.append(ExtensionEntry(name=PLAN_EXTENSION, data=data))

    async def _persist_usage(self) -> None:
        # The totals so far, one small line per model call: a resumed session continues them.
        with anyio.CancelScope(shield=True):
            await self._stored.append(self._usage.snapshot())

    def _replay_context(self) -> Callable[[CallSinks], ToolContext]:
        return self.tool_context


__all__ = [
    "AgentSession",
    "ModelUnavailable",
    "SessionOptions",
    "TurnEnded",
    "UnsupportedPrompt",
    "create_session",
    "title_from",
]
