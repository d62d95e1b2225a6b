"""Context shapers: what the model is sent, derived from the history without rewriting it.

The loop has one call site, `await shaper.shape_request(transcript, ctx)` before each model call,
and one recovery hook, `await shaper.compact_for_overflow(...)` when a call overflowed the window
(the loop then retries once). Before every call, cheapest first:

1. cap each tool result (`agent.context.shaping.cap_tool_results`);
2. prune old tool results to one-line stubs (`agent.context.shaping.prune_tool_results`);
3. if the request would still fill ~80% of the window, compact (`agent.context.compaction`): a
   summary plus the last turns verbatim, handed to the transcript as a `Compaction` value (a
   session records it as an entry) and the history read again from it;
4. as a last resort, squeeze tool results harder so the request fits the window anyway.

A model whose window is unknown is never compacted automatically (steps 3 and 4 need a window);
`/compact` still works. The shaper writes nothing itself: the transcript it is given records the
compaction (a session's in its file, a subagent's in memory).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Final

import anyio

from agent.context.caching import CacheSetting, CacheWarmth, PruneCheck, always
from agent.context.compaction import (
    PREAMBLE_OPENING,
    CompactionPolicy,
    ask_for_summary,
    build_preamble,
    choose_cut,
    files_touched,
    render_transcript,
    shared_summary_request,
    summary_request,
    unsummarised_note,
    window_of,
)
from agent.context.shaping import (
    CapMemo,
    PruneMemo,
    ShapingLimits,
    cap_tool_results,
    prune_tool_results,
)
from agent.context.tokens import CHARS_PER_TOKEN, ContextAccount, TokenCounter, request_overhead
from agent.events import CompactionFinished, CompactionStarted
from agent.todos import todos_from_history
from agent.transcript import Compaction, Transcript
from providers.records import MutableRecord, Record
from providers.types import (
    Message,
    ModelRequest,
    PromptCache,
    ProviderError,
    ReasoningEffort,
    TextPart,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from agent.context.usage import UsageTracker
    from agent.events import AgentEvent
    from providers.catalog import ModelInfo
    from providers.model import Model

_RETRY_AFTER_FAILURE: Final = 6
"""Messages appended after a failed auto-compaction before it is tried again; the wait doubles
with each failure in a row (a summariser that keeps failing is not asked on every call)."""
_RETRY_AFTER_FAILURE_MAX: Final = 200
_SQUEEZE_FLOOR_TOKENS: Final = 64
_SUMMARY_ASK_TOKENS: Final = 1_000
"""The summary request appended to the conversation, with room to spare."""
"""Calls a pruned result is expected to be sent again when the window is unknown."""


class ShapeContext(Record):
    """What a shaper may consult about the call about to be made."""

    model: Model
    model_info: ModelInfo | None
    context_tokens: int
    """What the previous call reported occupying (0 before the first call)."""
    emit: Callable[[AgentEvent], None]
    """For compaction and usage events."""
    system: str = ""
    """The request's system prompt (counted in size estimates)."""
    tools: Sequence[ToolSpec] = ()
    """The request's tools (counted in size estimates)."""
    reasoning_effort: ReasoningEffort | None = None
    cache: PromptCache | None = None
    """The request's effort and caching hints: a summary request that shares the conversation's
    prompt carries them too, so that it reads that prompt from the provider's cache."""


class CompactionResult(Record):
    ok: bool
    summary: str = ""
    """The preamble that now stands for the compacted part (what the model will see)."""
    error: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None

    def finished(self, compaction_id: str) -> CompactionFinished:
        """The event that ends compaction `compaction_id` with this result."""
        return CompactionFinished(
            compaction_id=compaction_id,
            ok=self.ok,
            summary=self.summary,
            error=self.error,
            tokens_before=self.tokens_before,
            tokens_after=self.tokens_after,
        )


_CANCELLED: Final = CompactionResult(ok=False, error="the compaction was cancelled")
"""A manual compaction's result when it was cancelled before it had one."""


class _Overhead(MutableRecord, kw_only=False):
    system: str = ""
    tools: Sequence[ToolSpec] = ()
    tokens: int = 0


class _Memos(MutableRecord, kw_only=False):
    cap: CapMemo = field(default_factory=CapMemo)
    prune: PruneMemo = field(default_factory=PruneMemo)


class ContextShaper:
    """Turns a history into the messages of the next request, and compacts when needed."""

    def __init__(
        self,
        *,
        policy: CompactionPolicy | None = None,
        limits: ShapingLimits | None = None,
        usage: UsageTracker | None = None,
        cache: CacheSetting = "off",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """
        Args:
            policy: when to compact and how much to keep.
            limits: fixed shaping limits; None scales them to the model's window on each call.
            usage: the session's usage tracker: a summary call's usage is added to it, and the
                context size after a compaction is reported through it.
            cache: the session's `cache` setting: with a prompt cache, pruning advances only
                when what it saves outweighs writing the changed prompt to the cache again,
                or when the cache has gone cold anyway (`off`: whenever it frees enough).
            clock: monotonic seconds, for telling a cold cache.
        """
        self.policy = policy or CompactionPolicy()
        self.limits = limits
        self.usage = usage
        self.warmth = CacheWarmth(cache, clock)
        self.counter = TokenCounter()
        self.account = ContextAccount(self.counter)
        self._memos = _Memos()
        self._pruned: frozenset[str] = frozenset()
        self._overhead = _Overhead()
        self._last_sent: list[Message] = []
        self._failed_at: int | None = None
        """History length when auto-compaction last failed (it waits for more to summarise)."""
        self._failures = 0
        self._learned: dict[tuple[str, str], int] = {}
        """Windows learned from overflow errors, by (provider, model)."""
        self._model: tuple[str, str] | None = None
        """The model the account's reports came from."""

    # --------------------------------------------------------------------------- per call

    async def shape_request(self, transcript: Transcript, ctx: ShapeContext) -> list[Message]:
        """The messages to send for the next call. The loop calls this before every call."""
        history = transcript.history()
        model = (ctx.model.provider_id, ctx.model.model_id)
        if model != self._model:
            # Another tokenizer: the last report and the ratio learned from it no longer apply.
            # (Another model has no cache of this prompt either.)
            self._model = model
            self.account.forget()
            self.warmth.forget()
        window = self.window(ctx)
        overhead = self._overhead_tokens(ctx)
        threshold = self.policy.threshold(window, _max_output(ctx.model_info))
        check = self.warmth.prune_check(
            context_tokens=ctx.context_tokens,
            threshold=threshold,
            info=ctx.model_info,
            estimate=self.counter.messages,
        )
        if check is not None and self._failed_at is not None:
            check = always  # compaction is failing: pruning is what keeps the request in
        shaped = self.shape(history, window, accept=check)
        if threshold is not None:
            assert window is not None
            tokens = self.account.estimate(shaped, overhead=overhead)
            if tokens > threshold and self._may_auto_compact(history):
                result = await self._compact(
                    transcript,
                    history,
                    ctx,
                    instructions=None,
                    manual=False,
                    tokens_before=tokens,
                    shaped=shaped,
                )
                if result.ok:
                    history = transcript.history()
                    # The prompt is new from its first message: prune all there is to prune
                    # now, so that it is written once, in the form the next calls will send.
                    shaped = self.shape(history, window, accept=always, minimum=0)
                    tokens = self.account.estimate(shaped, overhead=overhead)
                    if tokens > threshold:
                        # Still over (a huge latest turn): the squeeze below makes it fit, and
                        # summarising again on the very next call would gain nothing.
                        self._failed_at = len(history)
                        self._failures += 1
                else:
                    self._failed_at = len(history)
                    self._failures += 1
            shaped = self._fit(shaped, tokens, window, overhead, ctx.model_info)
        self._last_sent = shaped
        self.warmth.sent()
        return shaped

    def shape(
        self,
        history: Sequence[Message],
        window: int | None = None,
        *,
        accept: PruneCheck | None = None,
        minimum: int | None = None,
    ) -> list[Message]:
        """Steps 1 and 2: cap every tool result, prune old ones to stubs. The history is not
        changed; the one state kept is which results were pruned, so pruning only advances.
        `accept(freed, first, capped)` may refuse an advance (`agent.context.shaping`); `minimum`
        replaces the least an advance must free."""
        limits = self.limits or ShapingLimits.for_window(window)
        capped = cap_tool_results(
            history,
            max_tokens=limits.result_max_tokens,
            max_bytes=limits.result_max_bytes,
            memo=self._memos.cap,
        )
        outcome = prune_tool_results(
            capped,
            protect_tokens=limits.protect_tokens,
            minimum_tokens=limits.prune_minimum_tokens if minimum is None else minimum,
            already_pruned=self._pruned,
            counter=self.counter,
            memo=self._memos.prune,
            accept=None if accept is None else lambda freed, first: accept(freed, first, capped),
        )
        self._pruned = outcome.pruned
        return outcome.messages

    def observe(self, usage: Usage | None) -> int:
        """The call made with the last shaped messages finished and reported `usage`. Returns
        the context that call occupied (reported, else estimated)."""
        return self.account.record(self._last_sent, usage, overhead=self._overhead.tokens)

    def window(self, ctx: ShapeContext) -> int | None:
        """The window shaping works to: the catalog's (with the user's override), or less if a
        provider's overflow error showed the real one to be smaller."""
        window = window_of(ctx.model_info)
        learned = self._learned.get((ctx.model.provider_id, ctx.model.model_id))
        if learned is not None and (window is None or learned < window):
            return learned
        return window

    # ------------------------------------------------------------------------ compaction

    async def compact_for_overflow(
        self, transcript: Transcript, ctx: ShapeContext, error: ProviderError
    ) -> bool:
        """The last call overflowed the context window: shorten what `shape_request` returns.

        Returns True when something was shortened (the loop then retries once), False when
        nothing could be (the turn ends with a clear error).
        """
        overhead = self._overhead_tokens(ctx)
        sent = self.counter.messages(self._last_sent) + overhead
        self._learn_window(ctx, error)
        history = transcript.history()
        window = self.window(ctx)
        before = self.account.estimate(self.shape(history, window), overhead=overhead)
        result = await self._compact(
            transcript,
            history,
            ctx,
            instructions=None,
            manual=False,
            tokens_before=max(before, sent),
            drop_if_unsummarised=True,
        )
        if result.ok:
            return True
        if window is None:
            return False
        # Nothing to summarise (one huge turn) or the summary failed: squeezing the tool
        # results may still get the request under the window.
        shaped = self.shape(history, window)
        tokens = self.account.estimate(shaped, overhead=overhead)
        squeezed = self._fit(shaped, tokens, window, overhead, ctx.model_info)
        return self.counter.messages(squeezed) + overhead < sent

    def _learn_window(self, ctx: ShapeContext, error: ProviderError) -> None:
        """Remember a smaller window than the catalog's when the vendor's overflow message
        stated one (`providers.errors.classify` read it). An overflow without a stated limit
        teaches nothing reliable: the estimate of what was sent is not the vendor's count."""
        stated = error.context_limit
        if stated is None or stated <= 0:
            return
        known = self.window(ctx)
        if known is None or stated < known:
            self._learned[(ctx.model.provider_id, ctx.model.model_id)] = stated

    async def compact(
        self,
        transcript: Transcript,
        ctx: ShapeContext,
        *,
        instructions: str | None = None,
        settle: Callable[[], Awaitable[None]] | None = None,
    ) -> CompactionResult:
        """Summarise the conversation now (the `/compact [instructions]` command), announced
        as every compaction is (`_compact`); usage events go to `ctx.emit`. `settle` runs before
        the compaction is announced finished, whatever happened (the session records what the
        summary calls cost: no model call may follow to record it)."""
        history = transcript.history()
        shaped = self.shape(history, self.window(ctx))
        before = self.account.estimate(shaped, overhead=self._overhead_tokens(ctx))
        return await self._compact(
            transcript,
            history,
            ctx,
            instructions=instructions,
            manual=True,
            tokens_before=before,
            shaped=shaped,
            settle=settle,
        )

    async def _compact(
        self,
        transcript: Transcript,
        history: Sequence[Message],
        ctx: ShapeContext,
        *,
        instructions: str | None,
        manual: bool,
        tokens_before: int,
        drop_if_unsummarised: bool = False,
        shaped: Sequence[Message] | None = None,
        settle: Callable[[], Awaitable[None]] | None = None,
    ) -> CompactionResult:
        """The one place a compaction is announced (`CompactionStarted`, then
        `CompactionFinished` with its result), manual or automatic. A manual one cancelled
        (the user cancelled `/compact`) is still announced finished, as cancelled; an automatic
        one ends with its turn, which says it was cancelled."""
        compaction_id = uuid.uuid4().hex
        ctx.emit(CompactionStarted(compaction_id=compaction_id, manual=manual))
        announced: CompactionResult | None = _CANCELLED if manual else None
        try:
            try:
                result = await self._summarise_and_record(
                    transcript,
                    history,
                    ctx,
                    instructions=instructions,
                    tokens_before=tokens_before,
                    drop_if_unsummarised=drop_if_unsummarised,
                    shaped=shaped,
                )
            except Exception as exc:
                # Storage failing mid-compaction must not crash the turn: the request goes out
                # uncompacted and the overflow path (or the user) takes it from there.
                result = CompactionResult(
                    ok=False,
                    error=f"compaction failed: {type(exc).__name__}: {exc}",
                    tokens_before=tokens_before,
                )
            announced = result
        finally:
            if announced is not None:
                with anyio.CancelScope(shield=True):
                    if settle is not None:
                        await settle()
                    ctx.emit(announced.finished(compaction_id))
        return result

    async def _summarise_and_record(
        self,
        transcript: Transcript,
        history: Sequence[Message],
        ctx: ShapeContext,
        *,
        instructions: str | None,
        tokens_before: int,
        drop_if_unsummarised: bool,
        shaped: Sequence[Message] | None,
    ) -> CompactionResult:
        policy = self.policy
        window = self.window(ctx)
        start = 1 if history and _is_preamble(history[0]) else 0
        cut = choose_cut(
            history,
            keep_turns=policy.keep_turns,
            # The budget is in the provider's tokens; the cut counts estimated ones.
            tail_budget=max(1, int(policy.tail_budget(window) / self.account.ratio)),
            counter=self.counter,
            start=start,
        )
        if cut is None:
            return CompactionResult(
                ok=False,
                error="nothing to compact: the conversation is only its latest turn",
                tokens_before=tokens_before,
            )
        summary = await self._summary(
            history[:cut],
            ctx,
            instructions=instructions,
            start=start,
            shared=None if shaped is None else (shaped, len(history) - cut),
        )
        if isinstance(summary, ProviderError) and drop_if_unsummarised:
            # The window is proven full and no summary can be had: the alternative to leaving
            # the earlier part out is a session that fails every turn from now on.
            summary = unsummarised_note(history[start:cut], summary.message)
        if isinstance(summary, ProviderError):
            return CompactionResult(
                ok=False,
                error=f"the summary could not be written: {summary.message}",
                tokens_before=tokens_before,
            )
        # Everything said so far, compacted before or not: the todos and the files touched.
        said = transcript.messages()
        preamble = build_preamble(
            summary, todos=todos_from_history(said) or (), files=files_touched(said)
        )
        await transcript.record_compaction(
            Compaction(
                preamble=preamble,
                first_kept=history[cut],
                tokens_before=tokens_before,
                instructions=instructions,
            )
        )
        self.account.reset()
        self._failed_at = None
        self._failures = 0
        self.warmth.rewritten()
        rebuilt = self.shape(transcript.history(), window)
        after = self.account.estimate(rebuilt, overhead=self._overhead_tokens(ctx))
        if self.usage is not None:
            ctx.emit(self.usage.context_changed(after))
        return CompactionResult(
            ok=True, summary=preamble, tokens_before=tokens_before, tokens_after=after
        )

    async def _summary(
        self,
        before_cut: Sequence[Message],
        ctx: ShapeContext,
        *,
        instructions: str | None,
        start: int,
        shared: tuple[Sequence[Message], int] | None = None,
    ) -> str | ProviderError:
        """The model's summary of `before_cut`. A transient failure is retried (briefly: a
        turn is waiting); an overflow of the summary request itself is retried once with half
        the transcript.

        With `shared` (the messages the next request would send, and how many of them stay
        verbatim), the summary is asked for at the end of the conversation itself: the same
        system prompt, tools and messages as the calls before it, so that the provider reads
        nearly all of it from its prompt cache instead of a transcript it has never seen.
        Otherwise, or when that request would not fit, or fails, the part before the cut
        goes as a plain-text transcript."""
        policy = self.policy
        window = self.window(ctx)
        max_output = policy.summary_tokens(window, _max_output(ctx.model_info))
        tokens = policy.transcript_tokens(window, max_output)
        shared_request = None
        if shared is not None and self._fits(shared[0], ctx, window, max_output):
            messages, kept = shared
            shared_request = shared_summary_request(
                system=ctx.system,
                messages=messages,
                tools=ctx.tools,
                kept=kept,
                instructions=instructions,
                max_output_tokens=max_output,
                reasoning_effort=ctx.reasoning_effort,
                cache=ctx.cache,
            )

        def transcript_request(budget_chars: int) -> ModelRequest:
            transcript = render_transcript(before_cut, max_chars=budget_chars, start=start)
            return summary_request(
                transcript, instructions=instructions, max_output_tokens=max_output
            )

        def record(usage: Usage) -> None:
            if self.usage is not None:
                ctx.emit(self.usage.record(usage))

        return await ask_for_summary(
            ctx.model,
            shared=shared_request,
            transcript_request=transcript_request,
            budget_chars=int(tokens * CHARS_PER_TOKEN / self.account.ratio),
            max_output=max_output,
            record=record,
        )

    # --------------------------------------------------------------------------- helpers

    def _fits(
        self, messages: Sequence[Message], ctx: ShapeContext, window: int | None, max_output: int
    ) -> bool:
        """Whether the conversation with a summary request at its end fits the window (an
        unknown window: it was sent last time)."""
        if window is None:
            return True
        tokens = self.account.estimate(list(messages), overhead=self._overhead_tokens(ctx))
        return tokens + _SUMMARY_ASK_TOKENS + max_output <= window

    def _may_auto_compact(self, history: Sequence[Message]) -> bool:
        failed_at = self._failed_at
        if failed_at is None:
            return True
        wait = min(_RETRY_AFTER_FAILURE * 2 ** (self._failures - 1), _RETRY_AFTER_FAILURE_MAX)
        return len(history) >= failed_at + wait

    def _overhead_tokens(self, ctx: ShapeContext) -> int:
        cached = self._overhead
        if cached.system is not ctx.system or cached.tools is not ctx.tools:
            self._overhead = _Overhead(
                system=ctx.system,
                tools=ctx.tools,
                tokens=request_overhead(ctx.system, ctx.tools),
            )
        return self._overhead.tokens

    def _fit(
        self,
        shaped: list[Message],
        tokens: int,
        window: int,
        overhead: int,
        info: ModelInfo | None,
    ) -> list[Message]:
        """Step 4: the request (`tokens` now) must fit the window even when compaction could
        not make it (a huge batch of fresh results, a failed summary). Every seen result is
        pruned, then all results are capped harder, halving the cap until the estimate fits."""
        limit = window - min(_max_output(info) or 0, window // 4, 16_384)
        if tokens <= limit:
            return shaped
        squeezed = prune_tool_results(
            shaped, protect_tokens=0, minimum_tokens=0, counter=self.counter
        ).messages
        cap = (self.limits or ShapingLimits.for_window(window)).result_max_tokens
        while self.account.estimate(squeezed, overhead=overhead) > limit:
            cap //= 2
            if cap < _SQUEEZE_FLOOR_TOKENS:
                break
            squeezed = cap_tool_results(squeezed, max_tokens=cap, max_bytes=cap * CHARS_PER_TOKEN)
        return squeezed


def _is_preamble(message: Message) -> bool:
    if message.role != "user" or not message.parts:
        return False
    first = message.parts[0]
    return isinstance(first, TextPart) and first.text.startswith(PREAMBLE_OPENING)


def _max_output(info: ModelInfo | None) -> int | None:
    return info.max_output if info is not None else None
