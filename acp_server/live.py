"""One open session as the ACP server drives it: turns, queueing, cancellation, commands, pickers.

Prompt semantics:
- Turns on one session run one at a time. A plain prompt arriving while a turn runs is queued INTO
  that turn (`AgentSession.queue_prompt`: the model sees it between two calls) and its request is
  answered `end_turn` (or `cancelled`) when the running turn ends. Slash commands wait for the
  running turn instead.
- `session/cancel` (and `$/cancel_request` on a prompt) cancels the running turn AND every prompt
  received before it; requests waiting on the user are released at once; the turn then emits its
  final tool call updates and the prompt is answered `cancelled`. Should the turn not end within
  `CANCEL_GRACE_SECONDS`, it is torn down by force (still answered `cancelled`).
- A model error ends the turn with the error sentence sent as agent text and `end_turn`, so the
  editor's transcript shows what happened (as most peers do); a bug in earshot is a -32603.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, assert_never

import anyio

from acp_server.client_io import SessionChannel
from acp_server.commands import CommandCall, available_commands, parse_command, skill_prompt
from acp_server.config import parse_mode
from acp_server.content import PromptPart, prompt_parts
from acp_server.factory import SessionFactory, SkillCommand
from acp_server.pickers import SessionPickers
from acp_server.updates import UpdateTranslator, message_chunk, text_block
from agent.backends import MODES, FileBackend
from agent.events import (
    AgentEvent,
    ModeChanged,
    ModelChanged,
    Notice,
    StopReason,
    TurnEnded,
    UserMessageAdded,
)

if TYPE_CHECKING:
    from acp_server.protocol.common import ContentBlock
    from acp_server.protocol.prompt import StopReason as WireStopReason
    from agent.session import AgentSession

CANCEL_GRACE_SECONDS = 3.0


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


async def _read_prompt(
    blocks: Sequence[ContentBlock],
    files: FileBackend,
    problems: list[str],
    reading: set[anyio.CancelScope],
) -> list[PromptPart] | None:
    """The prompt's parts (attached files read), or None when a cancel came first (`cancel`
    cancels every scope in `reading`): a read that hangs (a slow mount, an editor that never
    answers) must not outlive the prompt."""
    with anyio.CancelScope() as scope:
        reading.add(scope)
        try:
            return await prompt_parts(blocks, files, problems)
        finally:
            reading.discard(scope)
    return None


@dataclass(slots=True)
class _Turn:
    grace: float
    """How long a cancelled run may wind down before it is torn down (0: a compaction, which
    `AgentSession.cancel` does not reach)."""
    done: anyio.Event = field(default_factory=anyio.Event)
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    stop: WireStopReason = "end_turn"


class LiveSession:
    """An `AgentSession` bound to the connection."""

    def __init__(
        self,
        *,
        agent: AgentSession,
        channel: SessionChannel,
        factory: SessionFactory,
        files: FileBackend,
        skills: Sequence[SkillCommand],
    ) -> None:
        self.agent = agent
        self.channel = channel
        self.factory = factory
        self.files = files
        self.skills = tuple(skills)
        self.pickers = SessionPickers(agent=agent, channel=channel, factory=factory)
        self.generation = 0
        self.running: _Turn | None = None
        self.closed = False
        self._turn_lock = anyio.Lock()
        self._reading: set[anyio.CancelScope] = set()
        """Prompts still reading their attached files: a cancel ends those reads too."""

    @property
    def id(self) -> str:
        return self.agent.id

    async def send_commands(self) -> None:
        await self.channel.update(available_commands(self.skills))

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

    def cancel(self) -> None:
        """Cancel the running turn and every prompt received so far (never raises)."""
        self.generation += 1
        self.channel.release()
        for reading in self._reading:
            reading.cancel()
        running = self.running
        if running is not None and not running.cancel_requested.is_set():
            running.cancel_requested.set()
            self.agent.cancel()

    async def prompt(self, blocks: Sequence[ContentBlock]) -> WireStopReason:
        """Run (or queue) one prompt; returns the ACP stop reason.

        Raises:
            sessions.SessionBusy: another process has the session open (it is read-only here).
            sessions.SessionWriteFailed: the session cannot be written at all.
        """
        generation = self.generation
        if self.running is None:
            # Before anything is read or recorded: a session another process has open is
            # read-only here, and a prompt says who has it (or takes it over once it is free).
            await self.agent.ensure_writable()
        first = blocks[0] if len(blocks) == 1 else None
        text = first["text"] if first is not None and first["type"] == "text" else None
        command = parse_command(text, self.skills)
        parts = None
        if command is None:
            problems: list[str] = []
            parts = await _read_prompt(blocks, self.files, problems, self._reading)
            if parts is None or generation != self.generation:
                return "cancelled"
            for problem in problems:
                await self.emit(Notice(severity="warning", message=problem))
            running = self.running
            if running is not None and self.agent.queue_prompt(parts):
                await running.done.wait()
                return "cancelled" if running.stop == "cancelled" else "end_turn"
        async with self._turn_lock:
            if generation != self.generation:
                return "cancelled"
            if command is not None:
                return await self._command(command)
            assert parts is not None
            return await self._run(self.agent.run_turn(parts))

    async def _run(
        self, events: AsyncIterator[AgentEvent], *, grace: float = CANCEL_GRACE_SECONDS
    ) -> WireStopReason:
        turn = _Turn(grace=grace)
        self.running = turn
        try:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(self._watchdog, turn, task_group.cancel_scope)
                turn.stop = await self._consume(events, turn)
                task_group.cancel_scope.cancel()
        except Exception:
            if turn.cancel_requested.is_set():
                turn.stop = "cancelled"
            else:
                raise
        finally:
            self.running = None
            turn.done.set()
        if turn.cancel_requested.is_set():
            turn.stop = "cancelled"
        return turn.stop

    async def _watchdog(self, turn: _Turn, scope: anyio.CancelScope) -> None:
        await turn.cancel_requested.wait()
        await anyio.sleep(turn.grace)
        scope.cancel()

    async def _consume(self, events: AsyncIterator[AgentEvent], turn: _Turn) -> WireStopReason:
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
        return stop

    async def emit(self, event: AgentEvent) -> None:
        for update in self.channel.translator.translate(event):
            await self.channel.update(update)
        match event:
            case ModeChanged():
                await self.pickers.send_mode()
                await self.pickers.send_options()
            case ModelChanged():
                await self.pickers.send_options()
            case _:
                pass

    async def replay(self) -> None:
        """Send the whole conversation (session/load), with a translator of its own."""
        translator = UpdateTranslator(client=self.channel.client, replaying=True)
        for event in self.agent.replay_events():
            if isinstance(event, UserMessageAdded):
                updates = [message_chunk("user_message_chunk", event.text, event.entry_id)]
            else:
                updates = translator.translate(event)
            for update in updates:
                await self.channel.update(update)
        await self.send_usage(translator)

    async def send_usage(self, translator: UpdateTranslator | None = None) -> None:
        """The context meter and cost as they stand, for a session reopened with history
        (`session/load` after its replay, `session/resume`); nothing for a new one."""
        usage = self.agent.usage_so_far()
        if usage is None:
            return
        translator = translator or UpdateTranslator(client=self.channel.client)
        for update in translator.translate(usage):
            await self.channel.update(update)

    # -------------------------------------------------------------------------- commands

    async def _say(self, text: str) -> None:
        await self.channel.update(
            {"sessionUpdate": "agent_message_chunk", "content": text_block(text)}
        )

    async def _command(self, call: CommandCall) -> WireStopReason:
        if call.skill:
            return await self._run(self.agent.run_turn(skill_prompt(call)))
        match call.name:
            case "compact":
                return await self._run(self.agent.compact(call.argument or None), grace=0)
            case "undo":
                await self._say(await self.agent.undo())
            case "mode":
                mode = parse_mode(call.argument)
                if mode is None:
                    await self._say(
                        f"Unknown mode `{call.argument}`: use one of {', '.join(MODES)}."
                    )
                else:
                    await self.pickers.set_mode(mode)
                    await self._say(f"Mode: {mode}.")
            case "model":
                await self._model_command(call.argument)
            case "clear":
                await self._clear()
            case _:
                await self._say(f"Unknown command /{call.name}.")
        return "end_turn"

    async def _model_command(self, name: str) -> None:
        if not name:
            await self._say(f"Model: {self.agent.model_name}.")
            return
        problem = self.factory.check_credentials(name, self.agent.cwd)
        if problem is not None:
            await self._say(problem)
            return
        try:
            await self.agent.set_model(name, self.agent.reasoning_effort)
        except Exception as exc:
            await self._say(f"Could not switch to {name}: {exc}")
            return
        await self.pickers.send_options()
        await self._say(f"Model: {name}.")

    async def _clear(self) -> None:
        """Start a fresh branch at the root of the transcript (nothing is deleted: the old
        conversation stays in the file and in `session/list`), carrying the current model and
        mode over, so later turns no longer see what came before."""
        from sessions import ModeChangeEntry, ModelChangeEntry

        stored = self.agent.persisted_session
        if stored is None:
            await self._say("Nothing to clear.")
            return
        await stored.rewind(None)
        await stored.append(
            ModelChangeEntry(
                model=self.agent.model_name, reasoning_effort=self.agent.reasoning_effort
            )
        )
        await stored.append(ModeChangeEntry(mode=self.agent.mode))
        self.agent.plan = ()
        await self.channel.update({"sessionUpdate": "plan", "entries": []})
        await self._say("Cleared: the next prompt starts a fresh conversation.")

    async def aclose(self) -> None:
        """Cancel whatever runs, wait briefly for it to wind down, and free the session."""
        self.closed = True
        self.cancel()
        running = self.running
        if running is not None:
            with anyio.move_on_after(CANCEL_GRACE_SECONDS + 1):
                await running.done.wait()
        await self.agent.aclose()
