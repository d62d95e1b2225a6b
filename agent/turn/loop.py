"""The turn loop: shape context -> stream the model -> gate and run its tool calls -> append the
results -> repeat, until the model stops calling tools, `max_turns`, cancellation, or a model
call fails for good.

Three invariants:
- every tool call gets a result (interrupted, unknown, invalid, denied, blocked or failed calls
  get an error result), so the transcript is always a valid next request;
- results are ordered by emission, not completion (the request history joins a batch's results
  into one tool message in call order);
- a failing tool is data; only the model call failing (or the transcript failing to be written)
  ends a turn early.

Acknowledged means durable: nothing is shown as done before the entry recording it is on disk,
and a transcript that cannot be written ends the turn with an error saying so
(`agent.turn.recording`).

The loop knows its session only through narrow parts: the current `TurnConfig` (frozen; read at
each model call), the `Transcript` it appends to, the context shaper, the turn's `Tooling`, where
usage goes, and the user's queued `Prompts`. A subagent runs the same loop with an in-memory
transcript, a restricted tool set and no prompts (`agent.session.subagent`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, assert_never

import anyio

from agent.backends import ToolUi
from agent.context import ContextShaper, ShapeContext
from agent.events import (
    AgentEvent,
    Notice,
    ReasoningChunk,
    Retrying,
    StopReason,
    TextChunk,
    ToolCallArguments,
    ToolCallFinished,
    ToolCallReady,
    ToolCallStarted,
    TurnEnded,
    UserMessageAdded,
)
from agent.tool_env import scrub
from agent.transcript import Transcript
from agent.turn.config import TurnConfig
from agent.turn.execution import BatchState, ToolExecutor
from agent.turn.recording import NotSaved, ResultRecorder, not_saved_message, try_append
from agent.turn.retry import describe_error
from agent.turn.tool_calls import (
    INTERRUPTED_TEXT,
    CheckedCall,
    SchemaValidators,
    error_result,
    interrupted_result,
    title_for,
    validate_call,
)
from agent.turn.tooling import Tooling
from providers.assemble import MessageAssembler
from providers.logs import get_logger
from providers.types import (
    Finish,
    FinishReason,
    Message,
    ModelRequest,
    ProviderError,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResultPart,
    Usage,
)
from sessions import INTERRUPTED_BY_STOP, SessionBusy, SessionWriteFailed, new_id

Emit = Callable[[AgentEvent], None]
UsageSink = Callable[[Usage | None, int], Awaitable[None]]
"""`record(usage, context_tokens)`: account one model call (tell the front end, keep totals)."""
_CLOSE_SECONDS = 5.0
_log = get_logger(__name__)


class Prompts(Protocol):
    """The user's prompts for a turn (`agent.turn.inbox.PromptInbox`): the turn's first one and
    those queued while it runs go through `admit` (the user_prompt_submit hooks)."""

    def take(self) -> list[Message]:
        """Prompts queued during the turn, removed from the queue."""
        ...

    def close(self) -> None:
        """The turn is ending: from now on prompts are refused rather than queued into it."""
        ...

    async def admit(self, message: Message) -> str | None:
        """None when the prompt may go ahead; else why it was blocked (a hook said so)."""
        ...

    async def appended(self, message: Message, entry_id: str) -> None:
        """Called once the turn's prompt is in the transcript (the session titles itself)."""
        ...


class _ModelCallFailed(Exception):
    def __init__(self, error: ProviderError, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


@dataclass(frozen=True, slots=True)
class _Streamed:
    message: Message
    finish: Finish | None
    usage: Usage | None
    error: ProviderError | None


def _stop_reason(finish: Finish | None) -> StopReason:
    reason: FinishReason = finish.reason if finish is not None else "stop"
    match reason:
        case "length":
            return "max_tokens"
        case "refusal" | "content_filter":
            return "refusal"
        case "stop" | "tool_calls" | "other" | "context_overflow" | "error":
            return "end_turn"
        case _:
            assert_never(reason)


class TurnLoop:
    """One `run_turn`: owns the turn's in-flight state so a cancellation can settle it."""

    def __init__(
        self,
        *,
        config: Callable[[], TurnConfig],
        transcript: Transcript,
        shaper: ContextShaper,
        tooling: Tooling,
        usage: UsageSink,
        emit: Emit,
        scope: anyio.CancelScope,
        prompts: Prompts | None = None,
        before_first_call: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._config = config
        self._before_first_call = before_first_call
        """Awaited once the prompt is recorded, under the turn's scope (the session's first turn
        waits there, within a budget, for tools still arriving: `agent.session.tool_arrivals`)."""
        self._transcript = transcript
        self._shaper = shaper
        self._tooling = tooling
        self._usage = usage
        self._prompts = prompts
        self._send = emit
        self._scope = scope
        self._validators = SchemaValidators()
        self._executor = ToolExecutor(tooling, emit=self._emit)
        self._message_id = ""
        self._assembler: MessageAssembler | None = None
        """The attempt being streamed; None once its message is appended or discarded."""
        self._pending: list[ToolCallPart] = []
        """Calls of the appended assistant message still waiting for their tool message."""
        self._batch = BatchState()
        self._checked: dict[str, CheckedCall] = {}
        self._open: dict[str, str] = {}
        """Calls shown to the front end (started) without a finished event yet: id -> name."""
        self._shown: dict[str, ToolUi] = {}
        """How this batch's finished calls were shown, recorded after their results (replay)."""
        self._context_tokens = 0
        self._recorder = ResultRecorder(transcript.append)
        self._not_saved: NotSaved | None = None  # why the transcript could not be written
        self._unadmitted: list[Message] = []
        """Queued prompts taken from `prompts` whose hooks have not decided yet."""
        self.last_text = ""
        """The text of the last assistant message (a subagent's result)."""

    # ------------------------------------------------------------------------ entry point

    async def run(self, prompt: Message | None) -> TurnEnded:
        """Run the turn and return how it ended; the caller emits the `TurnEnded`.

        Every user prompt, queued ones included, goes through the user_prompt_submit hooks first;
        a blocked one is dropped with a `Notice`. Prompts still queued when the turn ends early
        (cancelled, failed, out of turns) are admitted the same way and answered by the next
        turn: nothing typed is lost."""
        reason: StopReason | None = None
        failure: _ModelCallFailed | None = None
        internal: Exception | None = None
        try:
            with self._scope:
                try:
                    reason = await self._run(prompt)
                except _ModelCallFailed as exc:
                    failure = exc
                except (SessionWriteFailed, SessionBusy) as exc:
                    self._not_saved = self._not_saved or exc
                except Exception as exc:
                    internal = exc
                finally:
                    # Right where the loop decided to stop (no await in between, also when a
                    # cancellation passes through): a prompt arriving later would never be
                    # answered by this turn, so it is refused and gets a turn of its own.
                    if self._prompts is not None:
                        self._prompts.close()
        except anyio.get_cancelled_exc_class():
            # Cancelled from outside (the consumer went away): settle, then keep unwinding.
            await self._settle_safely(cancelled=True)
            await self._transcript.record_cancelled()
            raise
        await self._settle_safely(cancelled=reason is None or internal is not None)
        if reason is None and not (failure or internal or self._not_saved):
            await self._transcript.record_cancelled()
        if self._not_saved is not None:
            return TurnEnded(reason="error", message=not_saved_message(self._not_saved))
        if internal is not None:
            _log.error("turn failed", exc_info=internal)
            return TurnEnded(
                reason="error",
                message=scrub(f"Internal error: {type(internal).__name__}: {internal}"),
            )
        if failure is not None:
            # Adapters mask their own key; the loop masks again, for models that do not.
            error = replace(failure.error, message=scrub(failure.error.message))
            return TurnEnded(reason="error", error=error, message=scrub(failure.message))
        return TurnEnded(reason="cancelled" if reason is None else reason)

    async def _settle_safely(self, *, cancelled: bool) -> None:
        with anyio.CancelScope(shield=True):
            try:
                if cancelled:
                    await self._settle()
                await self._inject_queued()
            except Exception:
                # The transcript could not be completed (storage gone): still end the turn.
                _log.error("could not settle the turn", exc_info=True)

    async def _run(self, prompt: Message | None) -> StopReason:
        with anyio.CancelScope(shield=True):  # answer calls an earlier turn could not
            await self._transcript.open_turn()
        if prompt is not None:
            entry_id = await self._admit(prompt, queued=False)
            if entry_id is None:
                return "refusal"
            if self._prompts is not None:
                await self._prompts.appended(prompt, entry_id)
        if self._before_first_call is not None:
            await self._before_first_call()
        for _ in range(self._config().max_turns):
            await self._inject_queued()
            streamed = await self._call_model()
            calls = streamed.message.tool_calls
            if not calls:
                # A prompt queued during the final answer gets one more call, if a hook lets
                # it through.
                if await self._inject_queued():
                    continue
                return _stop_reason(streamed.finish)
            await self._run_tools(calls)
        return "max_turns"

    # ---------------------------------------------------------------------------- helpers

    def _emit(self, event: AgentEvent) -> None:
        if type(event) is ToolCallFinished:
            self._open.pop(event.call_id, None)
            if event.ui is not None and event.parent_call_id is None:
                self._shown[event.call_id] = event.ui
        self._send(event)

    async def _append(self, message: Message, entry_id: str | None = None) -> str:
        # Shielded: a write half-done when a cancellation lands would leave the transcript
        # unsure of what it holds.
        stored_id = ""
        with anyio.CancelScope(shield=True):
            stored_id = await self._transcript.append(message, entry_id)
        return stored_id

    async def _admit(self, prompt: Message, *, queued: bool) -> str | None:
        """Put a user prompt into history if the user_prompt_submit hooks let it through (its
        entry id); else tell the user why it was not sent (None)."""
        blocked = None if self._prompts is None else await self._prompts.admit(prompt)
        if blocked is not None:
            self._send(Notice(severity="warning", message=f"Prompt not sent: {blocked}"))
            return None
        entry_id = await self._append(prompt)
        self._send(UserMessageAdded(entry_id=entry_id, text=prompt.text, queued=queued))
        return entry_id

    async def _inject_queued(self) -> int:
        """Admit the prompts queued so far (and any queued while a hook ran); how many were."""
        admitted = 0
        while True:
            if not self._unadmitted:
                self._unadmitted = [] if self._prompts is None else self._prompts.take()
                if not self._unadmitted:
                    return admitted
            # Removed only once decided: a cancellation during its hook leaves it for the
            # settlement, so nothing typed is lost.
            if await self._admit(self._unadmitted[0], queued=True) is not None:
                admitted += 1
            self._unadmitted.pop(0)

    # ------------------------------------------------------------------------ model calls

    async def _call_model(self) -> _Streamed:
        retries = 0
        compacted = False
        while True:
            config = self._config()  # the one this call is made with, whatever changes meanwhile
            shape_ctx = ShapeContext(
                model=config.model,
                model_info=config.model_info,
                context_tokens=self._context_tokens,
                emit=self._send,
                system=config.system_prompt,
                tools=config.tools.specs,
                reasoning_effort=config.reasoning_effort,
                cache=config.cache,
            )
            messages = await self._shaper.shape_request(self._transcript, shape_ctx)
            request = ModelRequest(
                system=config.system_prompt,
                messages=messages,
                tools=config.tools.specs,
                reasoning_effort=config.reasoning_effort,
                cache=config.cache,
            )
            streamed = await self._stream(config, request)
            error = streamed.error
            if error is None or streamed.usage is not None:
                # A failed call without usage was most likely not billed: no guessed cost.
                await self._account(streamed.usage, messages, config.system_prompt)
            if error is None:
                await self._accept(streamed.message, self._message_id)
                return streamed
            self._discard()
            if error.kind == "context_overflow":
                if compacted:
                    raise _ModelCallFailed(error, describe_error(error))
                compacted = True
                if await self._shaper.compact_for_overflow(self._transcript, shape_ctx, error):
                    continue
                raise _ModelCallFailed(error, describe_error(error))
            delay = config.retry.delay(retries + 1, error)
            if delay is None:
                raise _ModelCallFailed(error, describe_error(error, attempts=retries + 1))
            retries += 1
            self._send(Retrying(attempt=retries, delay=delay, error=error))
            await anyio.sleep(delay)

    async def _stream(self, config: TurnConfig, request: ModelRequest) -> _Streamed:
        send = self._send
        message_id = new_id()
        assembler = MessageAssembler()
        self._assembler = assembler
        self._message_id = message_id
        feed = assembler.feed
        model = config.model
        events = model.stream(request)
        try:
            async for event in events:
                feed(event)
                # Hot path: one text delta costs an isinstance, a feed and an event.
                if isinstance(event, TextDelta):
                    if event.text:
                        send(TextChunk(text=event.text, message_id=message_id))
                elif isinstance(event, ReasoningDelta):
                    if event.text:
                        send(ReasoningChunk(text=event.text, message_id=message_id))
                elif isinstance(event, ToolCallStart):
                    self._started(event.call_id, event.name)
                elif isinstance(event, ToolCallDelta):
                    if event.arguments_delta:
                        send(ToolCallArguments(call_id=event.call_id, delta=event.arguments_delta))
                elif isinstance(event, ToolCallEnd):
                    self._ended(event, config)
        except Exception as exc:
            # A model is not supposed to raise for a provider failure; if one does, the turn
            # still ends with an error rather than a crash.
            failure = ProviderError(
                kind="unknown",
                message=scrub(f"{type(exc).__name__}: {exc}"),
                retryable=False,
                provider=model.provider_id,
            )
            return _Streamed(message=assembler.message(), finish=None, usage=None, error=failure)
        finally:
            await _close(events)
        return _Streamed(
            message=assembler.message(),
            finish=assembler.finish,
            usage=assembler.usage,
            error=_failure_of(assembler, model.provider_id),
        )

    def _started(self, call_id: str, name: str) -> None:
        if call_id in self._open:
            return
        self._open[call_id] = name
        self._send(ToolCallStarted(call_id=call_id, name=name, ui=title_for(name)))

    def _ended(self, event: ToolCallEnd, config: TurnConfig) -> None:
        self._started(event.call_id, event.name)
        call = ToolCallPart(
            id=event.call_id,
            name=event.name,
            arguments=event.arguments,
            invalid_arguments=event.raw_arguments if event.invalid_reason else None,
        )
        checked = self._check(call, config)
        self._checked[call.id] = checked
        self._send(
            ToolCallReady(call_id=call.id, name=call.name, arguments=call.arguments, ui=checked.ui)
        )

    def _check(self, call: ToolCallPart, config: TurnConfig) -> CheckedCall:
        return validate_call(
            call, config.tools, self._validators, self._tooling.context, self._emit
        )

    async def _account(self, usage: Usage | None, messages: Sequence[Message], system: str) -> None:
        if usage is not None:
            self._context_tokens = usage.input_tokens + usage.output_tokens
        else:
            self._context_tokens = estimate_tokens(messages, system)
        await self._usage(usage, self._context_tokens)

    async def _accept(self, message: Message, message_id: str) -> None:
        """The call succeeded: its message joins the history."""
        if message.parts:
            await self._append(message, message_id)
        self.last_text = message.text
        self._assembler = None
        self._pending = message.tool_calls
        self._batch = BatchState()

    def _discard(self) -> None:
        """A failed attempt's output never reaches history; close the calls it showed."""
        self._assembler = None
        for call_id, name in list(self._open.items()):
            self._emit(
                ToolCallFinished(
                    call_id=call_id,
                    name=name,
                    status="failed",
                    result=error_result(
                        ToolCallPart(id=call_id, name=name, arguments={}),
                        "the model call failed before this call was complete",
                    ),
                )
            )
        self._checked.clear()

    # ----------------------------------------------------------------------------- tools

    async def _run_tools(self, calls: list[ToolCallPart]) -> None:
        config = self._config()
        batch = [self._checked.pop(call.id, None) or self._check(call, config) for call in calls]
        # The assembled calls (with their merged metadata) are the ones answered.
        batch = [_with_call(item, call) for item, call in zip(batch, calls, strict=True)]
        await self._executor.run_batch(batch, self._batch, self._record_result)
        if self._not_saved is not None:  # a result could not be written: the settlement answers
            raise self._not_saved
        shown, self._shown = self._shown, {}
        await self._transcript.record_shown(shown)
        self._pending = []
        self._batch = BatchState()
        self._checked.clear()

    async def _record_result(self, result: ToolResultPart) -> bool:
        """Into the transcript before it is shown; False (the turn stops) when it cannot be."""
        if await self._recorder.record(result):
            return True
        self._not_saved = self._not_saved or self._recorder.failure
        self._scope.cancel()
        return False

    # ------------------------------------------------------------------------ settlement

    async def _settle(self) -> None:
        """After a cancellation: make the transcript whole. The partial assistant message is
        kept; its calls without a result get an "interrupted" one, appended, then shown."""
        assembler = self._assembler
        if assembler is not None:
            self._assembler = None
            message = assembler.message()
            if message.parts:
                failed = await try_append(self._transcript.append, message, self._message_id)
                self._not_saved = self._not_saved or failed
                self.last_text = message.text
            self._pending = message.tool_calls
        if self._pending:
            text = INTERRUPTED_TEXT if self._not_saved is None else INTERRUPTED_BY_STOP
            missing = [call for call in self._pending if call.id not in self._batch.results]
            results = [interrupted_result(call, text) for call in missing]
            if results:
                answers = Message(role="tool", parts=[*results])
                failed = await try_append(self._transcript.append, answers)
                self._not_saved = self._not_saved or failed
            for call, result in zip(missing, results, strict=True):
                self._interrupted(call, result)
            if self._not_saved is None:
                await self._transcript.record_shown(self._shown)
            self._pending = []
        for call_id, name in list(self._open.items()):
            # Shown to the front end but never completed by the model: not in the transcript.
            call = ToolCallPart(id=call_id, name=name, arguments={})
            self._interrupted(call, interrupted_result(call))

    def _interrupted(self, call: ToolCallPart, result: ToolResultPart) -> None:
        self._emit(
            ToolCallFinished(call_id=call.id, name=call.name, status="interrupted", result=result)
        )


async def _close(events: object) -> None:
    """Close a model stream promptly (its HTTP response), even while being cancelled."""
    aclose = getattr(events, "aclose", None)
    if aclose is None:
        return
    with anyio.move_on_after(_CLOSE_SECONDS, shield=True):
        await aclose()


def _with_call(item: CheckedCall, call: ToolCallPart) -> CheckedCall:
    return item if item.call is call else replace(item, call=call)


def _failure_of(assembler: MessageAssembler, provider: str) -> ProviderError | None:
    if assembler.error is not None:
        return assembler.error
    finish = assembler.finish
    if finish is None:
        return ProviderError(
            kind="network",
            message="the response stream ended before the model finished",
            retryable=True,
            provider=provider,
        )
    if finish.reason == "context_overflow":
        return ProviderError(
            kind="context_overflow",
            message="the model stopped because its context window is full",
            retryable=False,
            provider=provider,
        )
    if finish.reason == "error":
        return ProviderError(
            kind="unknown",
            message=f"the model call failed ({finish.raw_reason or 'no reason given'})",
            retryable=False,
            provider=provider,
        )
    return None


def estimate_tokens(messages: Sequence[Message], system: str) -> int:
    """A rough size of a request when the provider reported no usage (4 characters a token)."""
    chars = len(system)
    for message in messages:
        for part in message.parts:
            text = getattr(part, "text", None)
            if isinstance(text, str):
                chars += len(text)
            elif isinstance(part, ToolCallPart):
                chars += len(str(part.arguments))
    return chars // 4
