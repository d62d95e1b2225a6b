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
and a transcript that cannot be written ends the turn with an error saying so (`agent.recording`).

The loop knows its session only through `LoopHost`, so a subagent runs the same loop with an
in-memory history and a restricted tool set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol, assert_never

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
from agent.execution import (
    INTERRUPTED_TEXT,
    BatchState,
    CallSinks,
    Prepared,
    ToolExecutor,
    Validators,
    error_result,
    interrupted_result,
    prepare_call,
    title_for,
)
from agent.recording import (
    NotSaved,
    ResultRecorder,
    not_saved_message,
    record_shown,
    try_append,
)
from agent.retry import RetryPolicy, describe_error
from agent.tool_env import scrub
from agent.tools.base import AnyTool, ToolContext
from providers.assemble import MessageAssembler
from providers.logs import get_logger
from providers.types import (
    Finish,
    FinishReason,
    Message,
    ModelRequest,
    ProviderError,
    ReasoningDelta,
    ReasoningEffort,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from sessions import INTERRUPTED_BY_STOP, SessionBusy, SessionWriteFailed, new_id

if TYPE_CHECKING:
    from providers.catalog import ModelInfo
    from providers.model import Model
    from sessions import Session

Emit = Callable[[AgentEvent], None]
_CLOSE_SECONDS = 5.0
_log = get_logger(__name__)


class LoopHost(Protocol):
    """What the loop needs from whoever runs it (a session, or a subagent)."""

    @property
    def model(self) -> Model: ...
    @property
    def model_info(self) -> ModelInfo | None: ...
    @property
    def reasoning_effort(self) -> ReasoningEffort | None: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def tools(self) -> dict[str, AnyTool]: ...
    @property
    def tool_specs(self) -> Sequence[ToolSpec]: ...
    @property
    def max_turns(self) -> int: ...
    @property
    def retry_policy(self) -> RetryPolicy: ...
    @property
    def shaper(self) -> ContextShaper: ...
    @property
    def persisted_session(self) -> Session | None: ...

    def history(self) -> list[Message]:
        """The conversation as the next request starts from (before shaping)."""
        ...

    async def append_message(self, message: Message, entry_id: str | None = None) -> str:
        """Record `message` at the end of the conversation; returns its entry id (`entry_id`
        when given: an assistant message is stored under the id its chunks were streamed with,
        so a replay shows the same message ids)."""
        ...

    def take_queued(self) -> list[Message]:
        """Prompts queued during the turn, removed from the queue."""
        ...

    def has_queued(self) -> bool: ...

    def close_queue(self) -> None:
        """The turn is ending: from now on prompts are refused rather than queued into it."""
        ...

    async def record_usage(self, usage: Usage | None, context_tokens: int) -> None:
        """Account one model call (tell the front end and keep the totals)."""
        ...

    def tool_context(self, sinks: CallSinks) -> ToolContext: ...

    def executor(self, emit: Emit, cancel_turn: Callable[[], None]) -> ToolExecutor: ...

    async def accept_prompt(self, message: Message) -> str | None:
        """None when the prompt may go ahead; else why it was blocked (a hook said so)."""
        ...

    async def prompt_appended(self, message: Message, entry_id: str) -> None:
        """Called once the turn's prompt is in history (the session titles itself here)."""
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
        self, host: LoopHost, *, emit: Emit, scope: anyio.CancelScope, subagent: bool = False
    ) -> None:
        self._host = host
        self._send = emit
        self._scope = scope
        self._subagent = subagent
        self._validators = Validators()
        self._executor = host.executor(self._emit, scope.cancel)
        self._message_id = ""
        self._assembler: MessageAssembler | None = None
        """The attempt being streamed; None once its message is appended or discarded."""
        self._pending: list[ToolCallPart] = []
        """Calls of the appended assistant message still waiting for their tool message."""
        self._batch = BatchState()
        self._prepared: dict[str, Prepared] = {}
        self._open: dict[str, str] = {}
        """Calls shown to the front end (started) without a finished event yet: id -> name."""
        self._shown: dict[str, ToolUi] = {}
        """How this batch's finished calls were shown, recorded after their results (replay)."""
        self._context_tokens = 0
        self._recorder = ResultRecorder(host.append_message)
        self._not_saved: NotSaved | None = None  # why the transcript could not be written
        self._unadmitted: list[Message] = []
        """Queued prompts taken from the host whose hooks have not decided yet."""
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
                    self._host.close_queue()
        except anyio.get_cancelled_exc_class():
            # Cancelled from outside (the consumer went away): settle, then keep unwinding.
            await self._settle_safely(cancelled=True)
            raise
        await self._settle_safely(cancelled=reason is None or internal is not None)
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
        host = self._host
        stored = host.persisted_session
        if stored is not None and not self._subagent:
            with anyio.CancelScope(shield=True):  # answer calls an earlier turn could not
                await stored.repair()
        if prompt is not None:
            entry_id = await self._admit(prompt, queued=False)
            if entry_id is None:
                return "refusal"
            await host.prompt_appended(prompt, entry_id)
        for _ in range(host.max_turns):
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
            stored_id = await self._host.append_message(message, entry_id)
        return stored_id

    async def _admit(self, prompt: Message, *, queued: bool) -> str | None:
        """Put a user prompt into history if the user_prompt_submit hooks let it through (its
        entry id); else tell the user why it was not sent (None)."""
        blocked = await self._host.accept_prompt(prompt)
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
                self._unadmitted = self._host.take_queued()
                if not self._unadmitted:
                    return admitted
            # Removed only once decided: a cancellation during its hook leaves it for the
            # settlement, so nothing typed is lost.
            if await self._admit(self._unadmitted[0], queued=True) is not None:
                admitted += 1
            self._unadmitted.pop(0)

    # ------------------------------------------------------------------------ model calls

    async def _call_model(self) -> _Streamed:
        host = self._host
        policy = host.retry_policy
        retries = 0
        compacted = False
        while True:
            shape_ctx = ShapeContext(
                model=host.model,
                model_info=host.model_info,
                context_tokens=self._context_tokens,
                emit=self._send,
                session=host.persisted_session,
                system=host.system_prompt,
                tools=host.tool_specs,
            )
            messages = await host.shaper.prepare(host.history(), shape_ctx)
            request = ModelRequest(
                system=host.system_prompt,
                messages=messages,
                tools=host.tool_specs,
                reasoning_effort=host.reasoning_effort,
            )
            streamed = await self._stream(request)
            error = streamed.error
            if error is None or streamed.usage is not None:
                # A failed call without usage was most likely not billed: no guessed cost.
                await self._account(streamed.usage, messages)
            if error is None:
                await self._accept(streamed.message, self._message_id)
                return streamed
            self._discard()
            if error.kind == "context_overflow":
                if compacted:
                    raise _ModelCallFailed(error, describe_error(error))
                compacted = True
                if await host.shaper.compact_for_overflow(host.history(), shape_ctx, error):
                    continue
                raise _ModelCallFailed(error, describe_error(error))
            delay = policy.delay(retries + 1, error)
            if delay is None:
                raise _ModelCallFailed(error, describe_error(error, attempts=retries + 1))
            retries += 1
            self._send(Retrying(attempt=retries, delay=delay, error=error))
            await anyio.sleep(delay)

    async def _stream(self, request: ModelRequest) -> _Streamed:
        send = self._send
        message_id = new_id()
        assembler = MessageAssembler()
        self._assembler = assembler
        self._message_id = message_id
        feed = assembler.feed
        events = self._host.model.stream(request)
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
                    self._ended(event)
        except Exception as exc:
            # A model is not supposed to raise for a provider failure; if one does, the turn
            # still ends with an error rather than a crash.
            failure = ProviderError(
                kind="unknown",
                message=scrub(f"{type(exc).__name__}: {exc}"),
                retryable=False,
                provider=self._host.model.provider_id,
            )
            return _Streamed(message=assembler.message(), finish=None, usage=None, error=failure)
        finally:
            await _close(events)
        return _Streamed(
            message=assembler.message(),
            finish=assembler.finish,
            usage=assembler.usage,
            error=_failure_of(assembler, self._host.model.provider_id),
        )

    def _started(self, call_id: str, name: str) -> None:
        if call_id in self._open:
            return
        self._open[call_id] = name
        self._send(ToolCallStarted(call_id=call_id, name=name, ui=title_for(name)))

    def _ended(self, event: ToolCallEnd) -> None:
        self._started(event.call_id, event.name)
        call = ToolCallPart(
            id=event.call_id,
            name=event.name,
            arguments=event.arguments,
            invalid_arguments=event.raw_arguments if event.invalid_reason else None,
        )
        prepared = self._prepare(call)
        self._prepared[call.id] = prepared
        self._send(
            ToolCallReady(call_id=call.id, name=call.name, arguments=call.arguments, ui=prepared.ui)
        )

    def _prepare(self, call: ToolCallPart) -> Prepared:
        return prepare_call(
            call, self._host.tools, self._validators, self._host.tool_context, self._emit
        )

    async def _account(self, usage: Usage | None, messages: Sequence[Message]) -> None:
        if usage is not None:
            self._context_tokens = usage.input_tokens + usage.output_tokens
        else:
            self._context_tokens = estimate_tokens(messages, self._host.system_prompt)
        await self._host.record_usage(usage, self._context_tokens)

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
        self._prepared.clear()

    # ----------------------------------------------------------------------------- tools

    async def _run_tools(self, calls: list[ToolCallPart]) -> None:
        batch = [self._prepared.pop(call.id, None) or self._prepare(call) for call in calls]
        # The assembled calls (with their merged metadata) are the ones answered.
        batch = [_with_call(item, call) for item, call in zip(batch, calls, strict=True)]
        await self._executor.run_batch(batch, self._batch, self._record_result)
        if self._not_saved is not None:  # a result could not be written: the settlement answers
            raise self._not_saved
        shown, self._shown = self._shown, {}
        await record_shown(self._host.persisted_session, shown)
        self._pending = []
        self._batch = BatchState()
        self._prepared.clear()

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
                failed = await try_append(self._host.append_message, message, self._message_id)
                self._not_saved = self._not_saved or failed
                self.last_text = message.text
            self._pending = message.tool_calls
        if self._pending:
            text = INTERRUPTED_TEXT if self._not_saved is None else INTERRUPTED_BY_STOP
            missing = [call for call in self._pending if call.id not in self._batch.results]
            results = [interrupted_result(call, text) for call in missing]
            if results:
                answers = Message(role="tool", parts=[*results])
                failed = await try_append(self._host.append_message, answers)
                self._not_saved = self._not_saved or failed
            for call, result in zip(missing, results, strict=True):
                self._interrupted(call, result)
            if self._not_saved is None:
                await record_shown(self._host.persisted_session, self._shown)
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


def _with_call(item: Prepared, call: ToolCallPart) -> Prepared:
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
