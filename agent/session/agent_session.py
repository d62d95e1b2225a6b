"""The agent session: what ACP and the CLI drive.

`run_turn` streams `AgentEvent`s while the turn's work runs in a producer task
(`agent.turn.stream`). Consume it to the end, or inside `contextlib.aclosing(...)` when you may
stop early: closing it stops the turn and settles the transcript (stopping without closing leaves
the turn's task group to the garbage collector, which cannot end it cleanly).

The session owns its transcript (`agent.history.session_transcript`): every entry in the session
file is written by the session or by the turn loop through it, never by a front end.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from agent.backends import MODES, Interaction, Mode
from agent.commands.slash import CommandCall, command_menu, run_builtin, skill_prompt
from agent.commands.sources import ExtraCommands, run_extra
from agent.context.caching import DEFAULT_CACHE, prompt_cache
from agent.context.shaper import ContextShaper, ShapeContext
from agent.context.system_prompt import build_system_prompt, session_date
from agent.context.usage import SessionUsage, UsageTracker
from agent.events import (
    AgentEvent,
    ModeChanged,
    ModelChanged,
    Notice,
    TodoItem,
    TurnEnded,
    TurnStarted,
)
from agent.history.branches import Branches
from agent.history.replay import replay_events
from agent.history.session_transcript import SessionTranscript
from agent.history.undo_batches import BatchUndo
from agent.permissions.admin import PermissionAdmin
from agent.session.labels import SessionLabels
from agent.session.setup import (
    ModelUnavailable,
    SessionOptions,
    SessionSetup,
    build_model,
    own_commands,
    session_tools,
)
from agent.session.subagent import ChildSessions, RunningChildren, SubagentRunner
from agent.session.tool_arrivals import ToolArrivals
from agent.tools.base import ReadTracker, ScopeContract
from agent.turn.audit_trail import AuditTrail
from agent.turn.config import TurnConfig
from agent.turn.inbox import Prompt, PromptInbox, UnsupportedPrompt, prompt_message, title_from
from agent.turn.loop import TurnLoop
from agent.turn.retry import RetryPolicy
from agent.turn.stream import Announcer, OrderedInteraction, Produce, TurnStream
from agent.turn.tooling import Tooling
from providers.types import Message, ReasoningEffort
from sessions import SessionStore

if TYPE_CHECKING:
    from providers.catalog import ModelCatalog, ModelInfo
    from providers.model import Model

_CLOSE_WAIT_SECONDS = 10.0


class AgentSession:
    """One conversation: its transcript, model, mode, tools and the turn running in it."""

    def __init__(
        self,
        *,
        transcript: SessionTranscript,
        options: SessionOptions,
        model: Model,
        model_name: str,
        reasoning_effort: ReasoningEffort | None,
        mode: Mode,
        model_factory: Callable[[str], Model],
        catalog: ModelCatalog | None,
        interaction: Interaction,
        roots: tuple[Path, ...],
        setup: SessionSetup,
        store: SessionStore | None = None,
    ) -> None:
        self.transcript = transcript
        self._store = store
        self._options = options
        self._model_factory = model_factory
        self._catalog = catalog
        self._interaction = interaction
        self._setup = setup
        self.id = transcript.stored.id
        self.cwd = roots[0]
        self.roots = roots
        self.mode: Mode = mode
        self.model_name = model_name
        self.reasoning_effort: ReasoningEffort | None = reasoning_effort
        self.model_info: ModelInfo | None = _info(catalog, model)
        self.skill_names = (
            tuple(skill.name for skill in setup.skills.skills) if setup.skills else ()
        )
        self.running = False
        self._closed = False
        self._stream: TurnStream | None = None
        self._announce = Announcer()
        self.labels = SessionLabels(transcript, self._announce)
        """The title (`/title`, `session/set_title`) and the todo list (a plan with an id)."""
        self._scope_contract = ScopeContract()
        self._reads = ReadTracker()
        tracker = UsageTracker(model_info=self.model_info)
        tracker.restore(transcript.entries())
        cache = setup.settings.cache if setup.settings is not None else DEFAULT_CACHE
        self._shaper = ContextShaper(usage=tracker, cache=cache)
        self.usage = SessionUsage(
            tracker,
            observe=self._shaper.observe,
            info=lambda: _info(self._catalog, self.turn_config.model),
            record=transcript.record_usage,
            announce=self._announce,
        )
        tools = session_tools(options, setup)
        self.tools = tools
        """What the model may call: the built-in tools, `task`, and the composition's."""
        self.turn_config = TurnConfig(
            model=model,
            model_info=self.model_info,
            reasoning_effort=reasoning_effort,
            system_prompt=options.system_prompt
            or build_system_prompt(
                cwd=self.cwd,
                roots=roots,
                tool_names=list(tools),
                # The day the session started, not today: a prompt that changed with the date
                # would cost a resumed session its whole prompt cache.
                today=session_date(transcript.stored.header.created),
                client=options.client_prompt,
            ),
            tools=tools,
            cache=prompt_cache(cache, key=self.id),
            max_turns=options.max_turns,
            retry=RetryPolicy(
                max_retries=options.max_retries,
                base_delay=options.retry_base_delay,
                max_delay=options.retry_max_delay,
            ),
        )
        """What the next model call is made with (frozen: a model switch replaces it whole; the
        loop reads it at each model call). Read it, never assign it from outside: the session
        keeps it in step with its state."""
        self._inbox = PromptInbox(
            hooks=setup.hooks, session_id=self.id, appended=self.labels.prompt_appended
        )
        self.model_choices: Callable[[], Sequence[str]] = options.model_choices or tuple
        """The models `/model` lists (the composition root's picker list)."""
        self.commands = ExtraCommands((own_commands(self.cwd, setup), *options.command_sources))
        """Slash commands beyond the built-ins and skills (`agent.commands.sources`)."""
        self.permissions = PermissionAdmin(
            cwd=self.cwd, settings=setup.settings, gate=setup.gate, book=setup.rule_book
        )
        """`/permissions`: the rules in force, and the user's edits to them."""
        self.read_denied = setup.gate.read_denied
        """Whether reading a path (and a given file there) is refused at step 1 of the policy:
        for what a client names (an attached file reached through a symbolic link)."""
        self._undo = BatchUndo(setup.undo, transcript, self.cwd)
        self.branches = Branches(
            transcript=transcript,
            undo=self._undo,
            store=store,
            settings=lambda: (self.model_name, self.reasoning_effort, self.mode),
        )
        """`/rewind` and `/fork` (`agent.history.branches`)."""
        self._trail = AuditTrail(transcript.stored)
        notices = (setup.sandbox.notice(), self._undo.notice(), *options.notices)
        self._notices = [text for text in notices if text]
        """Said once, at the start of the first turn."""
        self.tool_arrivals = options.tool_arrivals or ToolArrivals()
        """Tools joining after the open (`agent.session.tool_arrivals`), and their notices."""
        self.tool_arrivals.attach(self._announce.deliver)
        self.children = RunningChildren()
        """The subagents at work in the running turn (a front end can cancel one)."""

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
        self.model_info = self.usage.tracker.model_info = _info(
            self._catalog, self.turn_config.model
        )
        self.turn_config = dataclasses.replace(self.turn_config, model_info=self.model_info)
        message = prompt_message(prompt, self.model_name, self.model_info)
        return self.run_step(partial(self._turn, message))

    def run_command(self, call: CommandCall) -> AsyncGenerator[AgentEvent, None]:
        """Run a slash command (`agent.commands.slash`) like a turn: it can be cancelled, and its
        events say what it did. A skill command runs a turn with the skill's prompt.

        Raises:
            RuntimeError: a turn is running (a command waits for it to end).
        """
        if call.skill:
            return self.run_turn(skill_prompt(call))
        extra = self.commands.find(call.name) if call.extra else None
        if extra is not None:
            if self.running:
                raise RuntimeError("a turn is running: run the command once it has ended")
            return run_extra(self, extra, call.argument)
        if call.name == "compact":
            return self.compact(call.argument or None)
        if self.running:
            raise RuntimeError("a turn is running: run the command once it has ended")
        skills = self._setup.skills.skills if self._setup.skills else ()
        menu = command_menu(skills, self.commands) if call.unknown else ()

        async def command(emit: Callable[[AgentEvent], None], scope: anyio.CancelScope) -> None:
            stream = self._stream
            assert stream is not None
            interaction = OrderedInteraction(self._interaction, stream)
            if await run_builtin(self, call, emit, interaction, menu):  # a rewind happened
                self.labels.rewound(emit)  # the plan as it stood on the new branch

        return self.run_step(command)

    def queue_prompt(self, prompt: Prompt) -> bool:
        """Queue a prompt into the running turn (`agent.turn.inbox`): it is sent after the current
        tool batch, before the next model call (never mid-batch). A prompt queued while the
        model streams its final answer makes the loop call the model once more.

        Returns False, recording nothing, when no turn is running or the running one is ending
        (the model has answered for the last time; the stop hook may still run): the caller
        starts a new turn with it (`run_turn`) once this one has ended. A prompt accepted into a
        turn that is then cancelled, fails or runs out of model calls is kept in history (after
        the hooks) and answered by the next turn.

        Raises:
            UnsupportedPrompt: the prompt cannot go to this model.
        """
        if not self.running:
            return False
        return self._inbox.queue(prompt_message(prompt, self.model_name, self.model_info))

    def cancel(self) -> None:
        """Stop the running turn or command: the turn's cancel scope is cancelled (model stream
        closed, tools and questions to the user cancelled, unfinished calls answered
        "interrupted"); `run_turn` then yields its last events and `TurnEnded("cancelled")`."""
        if self._stream is not None:
            self._stream.cancel()

    async def ensure_writable(self) -> None:
        """Be the session's writer (before a turn or a change): a session another process has
        open is read-only here; once it has let go, this takes it over (`Session.claim`).

        Raises:
            sessions.SessionBusy: another process has it open (the message names it).
            sessions.SessionWriteFailed: the data dir cannot be written.
        """
        if not self.transcript.stored.writable:  # no await otherwise: a change applies at once
            await self.transcript.stored.claim()

    async def set_mode(self, mode: Mode) -> None:
        """Switch the permission mode (takes effect at the next permission check)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        if mode == self.mode:
            return
        await self.ensure_writable()
        self.mode = mode
        await self.transcript.record_settings(mode=mode)
        self._announce(ModeChanged(mode=mode))

    async def set_model(
        self, model_name: str, reasoning_effort: ReasoningEffort | None = None
    ) -> None:
        """Switch model (and reasoning effort); takes effect at the next model call.

        Raises:
            ModelUnavailable: the model cannot be built; the current one stays.
            sessions.SessionBusy: another process has the session open; nothing changes.
        """
        await self.ensure_writable()
        model = build_model(self._model_factory, model_name)
        old = self.turn_config.model
        self.model_name = model_name
        self.reasoning_effort = reasoning_effort
        self.model_info = self.usage.tracker.model_info = _info(self._catalog, model)
        self.turn_config = dataclasses.replace(
            self.turn_config,
            model=model,
            model_info=self.model_info,
            reasoning_effort=reasoning_effort,
        )
        await self.transcript.record_settings(model=model_name, effort=reasoning_effort, mode=None)
        self._announce(ModelChanged(model=model_name, reasoning_effort=reasoning_effort))
        if old is not model:
            await old.aclose()

    def compact(self, instructions: str | None = None) -> AsyncGenerator[AgentEvent, None]:
        """Summarise the conversation so far (the `/compact` command): `CompactionStarted`,
        usage, then `CompactionFinished`. Cancelled like a turn.

        Raises:
            RuntimeError: a turn is running.
        """
        if self.running:
            raise RuntimeError("cannot compact while a turn is running")
        return self.run_step(partial(self._compaction, instructions))

    async def clear(self) -> None:
        """Start over (the `/clear` command): the transcript continues on a fresh branch from
        its root, carrying the model and mode over (nothing is deleted: the conversation so far
        stays in the file, and in `session/list`), and the todo list is emptied."""
        await self.ensure_writable()
        await self.transcript.clear(
            model=self.model_name, effort=self.reasoning_effort, mode=self.mode
        )
        self.labels.cleared()

    async def undo(self) -> str:
        """Restore the files changed by this session's last tool batch; says what happened."""
        return await self._undo.undo_last()

    def replay_events(self) -> list[AgentEvent]:
        """The conversation on the current path as events (ACP `session/load`)."""
        tooling = self._tooling(anyio.CancelScope(), self._interaction)
        return replay_events(self.transcript.entries(), self.tools, tooling.context)

    def history(self) -> list[Message]:
        """What the next request starts from (`Transcript.history`)."""
        return self.transcript.history()

    async def aclose(self) -> None:
        """Stop a running turn (waiting briefly for it to settle) and release the model and
        the session file (once: the end of the session's block closes it too)."""
        if self._closed:
            return
        self._closed = True
        stream = self._stream
        if stream is not None:
            stream.cancel()
            with anyio.move_on_after(_CLOSE_WAIT_SECONDS):
                await stream.done.wait()
        try:
            await self.turn_config.model.aclose()
            await self.transcript.stored.aclose()
        finally:
            await self._setup.aclose()
            for close in self._options.on_close:
                await close()

    # ---------------------------------------------------------------------- turn machinery

    def run_step(self, produce: Produce) -> AsyncGenerator[AgentEvent, None]:
        """Run `produce` like a turn (a turn, a command, an extra command's preparation:
        `run_extra`): under the turn's cancel scope, which `cancel` cancels, its events
        streamed."""
        stream = TurnStream()
        self._stream = stream
        self.running = True
        self._announce.stream = stream

        def ended() -> None:
            if self._stream is stream:
                self._stream = None
                self.running = False
                self._announce.stream = None

        return stream.events(produce, on_done=ended)

    def _tooling(self, turn: anyio.CancelScope, interaction: Interaction) -> Tooling:
        return self._setup.tooling(
            session_id=self.id,
            cwd=self.cwd,
            roots=self.roots,
            interaction=interaction,
            mode=lambda: self.mode,
            scope=self._scope_contract,
            reads=self._reads,
            turn=turn,
            snapshot=self._undo.snapshot,
            trail=self._trail,
        )

    async def _turn(
        self, message: Message, emit: Callable[[AgentEvent], None], scope: anyio.CancelScope
    ) -> None:
        stream = self._stream
        assert stream is not None
        self._inbox.open()
        try:
            emit(TurnStarted(turn_id=uuid.uuid4().hex))
            for text in self._notices:
                emit(Notice(severity="warning", message=text))
            self._notices = []
            arrivals = self.tool_arrivals
            for notice in arrivals.take_notices():
                emit(notice)

            def config() -> TurnConfig:
                # Read at each model request: the tools that arrived since join at the end.
                joined = arrivals.join(self.turn_config.tools)
                if joined is not None:
                    self.tools = joined
                    self.turn_config = dataclasses.replace(self.turn_config, tools=joined)
                return self.turn_config

            tooling = self._tooling(scope, OrderedInteraction(self._interaction, stream))
            subagents = SubagentRunner(
                config=config,
                tooling=tooling,
                emit=emit,
                usage=self.usage.subagent_call,
                children=None
                if self._store is None
                else ChildSessions(self._store, self.transcript, lambda: self.model_name),
                running=self.children,
            )
            tooling = dataclasses.replace(
                tooling,
                services=dataclasses.replace(
                    tooling.services, todos=self.labels.publish_todos, subagents=subagents
                ),
            )
            loop = TurnLoop(
                config=config,
                transcript=self.transcript,
                shaper=self._shaper,
                tooling=tooling,
                usage=self.usage.model_call,
                prompts=self._inbox,
                emit=emit,
                scope=scope,
                # The first turn: what is still starting, within its budget.
                before_first_call=arrivals.settle,
            )
            repo_map = await self._setup.turn_started(message.text, self._reads, emit)
            if repo_map is not None:  # once per session: it stays for the later requests
                prompt = f"{self.turn_config.system_prompt}\n\n{repo_map}"
                self.turn_config = dataclasses.replace(self.turn_config, system_prompt=prompt)
            end = await loop.run(message)
            # The loop closed the inbox when it stopped: nothing queued can be waiting here for
            # an answer that would never come.
            hooks = self._setup.hooks
            if hooks is not None:
                with anyio.CancelScope(shield=True):
                    await hooks.stop(session_id=self.id, reason=end.reason)
            emit(end)
        finally:
            self._inbox.close()

    async def _compaction(
        self, instructions: str | None, emit: Callable[[AgentEvent], None], scope: anyio.CancelScope
    ) -> None:
        config = self.turn_config
        ctx = ShapeContext(
            model=config.model,
            model_info=config.model_info,
            context_tokens=self.usage.tracker.context_tokens,
            emit=emit,
            system=config.system_prompt,
            tools=config.tools.specs,
            reasoning_effort=config.reasoning_effort,
            cache=config.cache,
        )
        calls = self.usage.tracker.calls

        async def settle() -> None:
            if self.usage.tracker.calls != calls:
                # The summary calls cost something; no model call may follow to record them.
                await self.usage.persist()

        await self._shaper.compact(self.transcript, ctx, instructions=instructions, settle=settle)

    @property
    def title(self) -> str | None:
        return self.labels.title

    @property
    def todos(self) -> tuple[TodoItem, ...]:
        return self.labels.plan.items


def _info(catalog: ModelCatalog | None, model: Model) -> ModelInfo | None:
    if catalog is None:
        return None
    return catalog.get(model.provider_id, model.model_id)


__all__ = [
    "AgentSession",
    "CommandCall",
    "ModelUnavailable",
    "SessionOptions",
    "TurnEnded",
    "UnsupportedPrompt",
    "title_from",
]
