"""One open session as the ACP server drives it: turns, queueing, cancellation, commands, pickers.

Prompt semantics:
- Turns on one session run one at a time. A plain prompt arriving while a turn runs is queued INTO
  that turn (`AgentSession.queue_prompt`: the model sees it between two calls) and its request is
  answered `end_turn` (or `cancelled`) when the running turn ends. Slash commands wait for the
  running turn instead.
- A turn (or a slash command, which runs like one) runs in the session's block, where its events
  become `session/update`s; its prompt's request waits for its end.
- Cancellation goes through two cancel scopes: a prompt's request scope (`$/cancel_request`
  cancels one, `session/cancel` every prompt of the session in flight) and the turn's (the
  agent's: the model stream, tools, and requests waiting on the user are cancelled with it). A
  prompt whose request scope was cancelled stops whatever it was waiting for (the session's
  build, its attached files being read, the running turn it was queued into, its own turn) and
  its handler answers `cancelled` (`PromptRun.answer`, the one place): when it had started the
  turn, once it has cancelled the turn's scope and the turn has ended, its final tool call
  updates sent.
- A model error ends the turn with the error sentence sent as agent text and `end_turn`, so the
  editor's transcript shows what happened (as most peers do); a bug in earshot is a -32603.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, assert_never

import anyio
import anyio.lowlevel

from acp_server.client_io import SessionChannel
from acp_server.commands import CommandList, taken_names
from acp_server.content import prompt_parts
from acp_server.pickers import SessionPickers
from acp_server.subagents import Routed, SubagentView
from acp_server.updates import UpdateTranslator, message_chunk
from agent.backends import FileBackend
from agent.commands import CommandCall, parse_slash_command
from agent.events import (
    AgentEvent,
    CommandOutput,
    ModeChanged,
    ModelChanged,
    Notice,
    StopReason,
    TurnEnded,
    UserMessageAdded,
)

if TYPE_CHECKING:
    from acp_server.ports import OpenedSession, Workspace
    from acp_server.protocol.common import ContentBlock
    from acp_server.protocol.prompt import SessionUpdate
    from acp_server.protocol.prompt import StopReason as WireStopReason
    from agent.tasks import SessionTasks

CLOSE_WAIT_SECONDS = 4.0
"""How long closing a session waits for its cancelled turn to settle."""


def wire_stop_reason(reason: StopReason) -> WireStopReason:
    match reason:
        case "end_turn" | "error":
            return "end_turn"
        case "max_tokens":
            return "max_tokens"
        case "max_turns":
            return "max_turn_requests"
        case "refusal":
            return "refusal"
        case "cancelled":
            return "cancelled"
        case _:
            assert_never(reason)


@dataclass(slots=True)
class RunningTurn:
    """The turn (or command) running on the session, as its prompts see it."""

    done: anyio.Event = field(default_factory=anyio.Event)
    stop: WireStopReason = "end_turn"
    failure: Exception | None = None
    """What the turn raised (a bug): its prompt's answer, unless the prompt was cancelled."""


class PromptRun:
    """One `session/prompt`, in two steps around its request's cancel scope (`acp_server.server`
    enters it): `run` inside it, `answer` after it."""

    def __init__(
        self, session: Callable[[], Awaitable[LiveSession]], blocks: Sequence[ContentBlock]
    ) -> None:
        self._session = session
        self._blocks = blocks
        self._live: LiveSession | None = None
        self._turn: RunningTurn | None = None
        self._stop: WireStopReason = "cancelled"

    async def run(self) -> None:
        """Wait for the session (still being built), read the prompt, then queue it into the
        running turn and wait for that turn's end, or start a turn of its own in the session's
        block and wait for its end.

        Raises:
            sessions.SessionBusy: another process has the session open (it is read-only here).
            sessions.SessionWriteFailed: the session cannot be written at all.
        """
        self._live = live = await self._session()
        ready = await live.ready_for(self._blocks)
        if not callable(ready):
            self._stop = ready  # queued into the running turn, which answered it
            return
        try:  # the turn lock is held: `answer` lets it go
            await anyio.lowlevel.checkpoint_if_cancelled()  # cancelled meanwhile: nothing starts
            self._turn = turn = live.start(ready())
        except BaseException:
            live.release()
            raise
        await turn.done.wait()

    async def answer(self, *, cancelled: bool) -> WireStopReason:
        """The prompt's stop reason; `cancelled` when its request scope was cancelled (the one
        place a caught cancellation becomes an answer). A turn it started and that still runs is
        cancelled first (the turn's scope) and waited for: its final updates come before the
        answer.

        Raises:
            Exception: what the turn raised (a bug), unless the prompt was cancelled.
        """
        turn, live = self._turn, self._live
        if turn is not None and live is not None:
            try:
                if not turn.done.is_set():
                    live.agent.cancel()
                    await turn.done.wait()
            finally:
                live.release()
            if turn.failure is not None and not cancelled:
                raise turn.failure
            self._stop = turn.stop
        return "cancelled" if cancelled else self._stop


class LiveSession:
    """An `AgentSession` bound to the connection, in its block (`tasks`)."""

    def __init__(
        self,
        *,
        opened: OpenedSession,
        channel: SessionChannel,
        workspace: Workspace,
        files: FileBackend,
        tasks: SessionTasks,
    ) -> None:
        agent = opened.agent
        self.opened = opened
        """What the composition root opened (the agent, the skills, the warm-up)."""
        self.agent = agent
        self.tasks = tasks
        """The session's block: what runs beside its turns (`acp_server.opening`)."""
        self.channel = channel
        self.files = files
        self.skills = tuple(opened.skills)
        self._command_list = CommandList()
        self.pickers = SessionPickers(agent=agent, channel=channel, workspace=workspace)
        self.running: RunningTurn | None = None
        self.closed = False
        self.rewinds = 0
        """How many times `/rewind` moved the conversation: each re-render takes fresh ids."""
        self.warming: anyio.Event | None = None
        """Set once the warm-up that follows the session's open has ended (None: none runs).
        The warm-up imports in a worker thread what a turn imports: a turn waits for it rather
        than import the same modules at once and meet one half-imported by the other."""
        self._turn_lock = anyio.Lock()
        if channel.subagents is not None:
            channel.subagents.control = agent.children  # `session/cancel` on a child
        # An MCP server that starts in the background brings its prompts (slash commands).
        agent.tool_arrivals.watch(self._watch_commands)

    @property
    def id(self) -> str:
        return self.agent.id

    async def send_commands(self) -> None:
        await self._command_list.send(self.channel, self.skills, self.agent.commands, force=True)

    def _watch_commands(self) -> None:
        if self.tasks.open:  # not once the session's block is over
            self.tasks.start_soon(self._commands_changed)

    async def _commands_changed(self) -> None:
        if not self.closed:
            await self._command_list.send(
                self.channel, self.skills, self.agent.commands, force=False
            )

    async def refresh_models(self) -> None:
        """In the background once the session is open: the servers that list their own models
        are asked; when the picker changed, the client gets the new options. Failures only cost
        the refresh."""
        try:
            changed = await self.pickers.refresh_models()
        except Exception as exc:
            from acp_server.log import log

            log("refreshing the model list failed", {"error": repr(exc), "exc": exc})
            return
        if changed and not self.closed:
            await self.pickers.send_options()

    # ----------------------------------------------------------------------------- turns

    def command_in(self, blocks: Sequence[ContentBlock]) -> CommandCall | None:
        """The slash command a prompt is (one text block: `/name args`), if it is one."""
        first = blocks[0] if len(blocks) == 1 else None
        text = first["text"] if first is not None and first["type"] == "text" else None
        names = [skill.name for skill in self.skills]
        slashed = text is not None and text.lstrip().startswith("/")
        extras = (
            [extra.name for extra in self.agent.commands.all(taken_names(self.skills))]
            if slashed
            else []
        )
        return parse_slash_command(text, names, extras)

    async def ready_for(
        self, blocks: Sequence[ContentBlock]
    ) -> Callable[[], AsyncIterator[AgentEvent]] | WireStopReason:
        """Read the prompt, then queue it into the running turn (the stop reason once that has
        ended) or take the turn lock and return what starts its own turn or command (`start`
        it, then `release` the lock once it has ended)."""
        if self.warming is not None:
            await self.warming.wait()
        if self.running is None:
            # Before anything is read or recorded: a session another process has open is
            # read-only here, and a prompt says who has it (or takes it over once it is free).
            await self.agent.ensure_writable()
        command = self.command_in(blocks)
        if command is not None:
            await self._turn_lock.acquire()
            return partial(self.agent.run_command, command)
        problems: list[str] = []
        parts = await prompt_parts(blocks, self.files, problems, read_denied=self.agent.read_denied)
        for problem in problems:
            await self.emit(Notice(severity="warning", message=problem))
        running = self.running
        if running is not None and self.agent.queue_prompt(parts):
            await running.done.wait()
            return running.stop
        await self._turn_lock.acquire()
        return partial(self.agent.run_turn, parts)

    def start(self, events: AsyncIterator[AgentEvent]) -> RunningTurn:
        """Run a turn's `events` in the session's block (the turn lock held): each becomes
        updates as it comes, whatever becomes of the prompt that started it."""
        turn = RunningTurn()
        self.running = turn
        self.tasks.start_soon(self._run, events, turn)
        return turn

    def release(self) -> None:
        """Let the next turn start (the prompt that took the lock has its answer)."""
        self._turn_lock.release()

    async def _run(self, events: AsyncIterator[AgentEvent], turn: RunningTurn) -> None:
        try:
            turn.stop = await self._consume(events)
            # Between turns: a command file added or an MCP server restarted shows in the menu.
            await self._command_list.send(
                self.channel, self.skills, self.agent.commands, force=False
            )
        except Exception as exc:
            turn.failure = exc
        finally:
            self.running = None
            turn.done.set()

    async def _consume(self, events: AsyncIterator[AgentEvent]) -> WireStopReason:
        stop: WireStopReason = "end_turn"
        try:
            async for event in events:
                await self.emit(event)
                if isinstance(event, TurnEnded):
                    stop = wire_stop_reason(event.reason)
                    if event.reason == "error":
                        sentence = event.message or (
                            event.error.message if event.error else "the model call failed"
                        )
                        await self.channel.update(
                            message_chunk("agent_message_chunk", f"\n\n{sentence}", None)
                        )
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
            # A terminal is held until its call's final update (`SessionChannel`); a turn that
            # ended without one (cancelled) lets the rest go.
            await self.channel.release_held()
        return stop

    async def emit(self, event: AgentEvent) -> None:
        await self.channel.emit(event)
        match event:
            case ModeChanged():
                await self.pickers.send_mode()
                await self.pickers.send_options()
            case ModelChanged():
                await self.pickers.send_options()
            case CommandOutput(branch_changed=True):
                from acp_server.branches import rewound_replay

                self.rewinds += 1
                await rewound_replay(self.channel, self.replay, self.rewinds)
            case _:
                pass

    async def replay(self, rename: Callable[[SessionUpdate], SessionUpdate] | None = None) -> None:
        """Send the whole conversation (session/load), with a translator of its own; each
        update through `rename` (a rewound replay's fresh ids)."""
        client = self.channel.client
        translator = UpdateTranslator(client=client, replaying=True)
        view = SubagentView(client, lambda: self.id, replaying=True) if client.subagents else None
        for event in self.agent.replay_events():
            if isinstance(event, UserMessageAdded):
                routed: Routed = [
                    (None, message_chunk("user_message_chunk", event.text, event.entry_id))
                ]
            elif view is not None:
                routed = view.routed(event, translator)
            else:
                routed = [(None, update) for update in translator.translate(event)]
            for session_id, update in routed:
                await self.channel.update(rename(update) if rename else update, session_id)
        self.channel.translator.plans.shown = translator.plans.shown  # the plan the client has
        await self.send_usage(translator)

    async def send_usage(self, translator: UpdateTranslator | None = None) -> None:
        """The context meter and cost as they stand, for a session reopened with history
        (`session/load` after its replay, `session/resume`); nothing for a new one."""
        usage = self.agent.usage.so_far()
        if usage is None:
            return
        translator = translator or self.channel.translator
        for update in translator.translate(usage):
            await self.channel.update(update)

    async def aclose(self) -> None:
        """Cancel the running turn (its scope; the prompts in flight were cancelled by the
        session table) and wait briefly for it to wind down: the session's host then leaves
        its block, whose end closes the agent session and what ran beside it."""
        self.closed = True
        running = self.running
        if running is not None:
            self.agent.cancel()
            with anyio.move_on_after(CLOSE_WAIT_SECONDS):
                await running.done.wait()
