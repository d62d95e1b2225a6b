"""Retries with backoff, and context overflow: one compaction attempt, then a clear error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from agent.context import ContextShaper, ShapeContext
from agent.events import Retrying, TextChunk, TurnEnded
from agent.transcript import Transcript
from agent.turn.retry import RetryPolicy, describe_error
from providers.types import (
    Finish,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
)
from providers.wire.scripted import ScriptedModel, ScriptedTurn
from tests.agent.loop_support import collect, env, make_session, of


def _rate_limited(retry_after: float | None = 0.001) -> ProviderError:
    return ProviderError(
        kind="rate_limit",
        message="slow down",
        retryable=True,
        retry_after=retry_after,
        status=429,
        provider="acme",
    )


def _overflow() -> ProviderError:
    return ProviderError(
        kind="context_overflow",
        message="prompt is too long: 250000 tokens > 200000 maximum",
        retryable=False,
        status=400,
        provider="acme",
    )


def test_full_jitter_backoff_is_bounded_and_exponential() -> None:
    policy = RetryPolicy(max_retries=5, base_delay=1.0, max_delay=5.0)
    error = _rate_limited(retry_after=None)
    assert [policy.delay(n, error, rand=lambda: 1.0) for n in (1, 2, 3, 4)] == [1, 2, 4, 5]
    assert policy.delay(3, error, rand=lambda: 0.5) == 2.0
    assert policy.delay(1, error, rand=lambda: 0.0) == 0.0
    assert policy.delay(6, error) is None


def test_retry_after_wins_but_not_beyond_max_delay() -> None:
    policy = RetryPolicy(max_retries=3, base_delay=1.0, max_delay=10.0)
    assert policy.delay(1, _rate_limited(retry_after=7.5)) == 7.5
    assert policy.delay(1, _rate_limited(retry_after=30.0)) is None
    not_retryable = ProviderError(kind="auth", message="no", retryable=False)
    assert policy.delay(1, not_retryable) is None


def test_describe_error_names_the_provider_and_attempts() -> None:
    text = describe_error(_rate_limited(), attempts=3)
    assert text == "acme is rate limiting requests after 3 attempts: slow down"


async def test_retryable_errors_are_retried_and_partial_output_discarded(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            ScriptedTurn(text="half an ans", error=_rate_limited(0.002)),
            ScriptedTurn(error=_rate_limited(0.001)),
            ScriptedTurn(text="the whole answer"),
        ]
    )
    session = await make_session(env(tmp_path), model, max_retries=3)
    events = await collect(session.run_turn("go"))

    retries = of(Retrying, events)
    assert [(r.attempt, r.delay) for r in retries] == [(1, 0.002), (2, 0.001)]
    assert retries[0].error.kind == "rate_limit"
    assert events[-1] == TurnEnded(reason="end_turn")
    assert [m.text for m in session.history()] == ["go", "the whole answer"]
    # The discarded attempt streamed under its own message id.
    chunks = of(TextChunk, events)
    assert chunks[0].message_id != chunks[-1].message_id
    await session.aclose()


async def test_retries_are_bounded(tmp_path: Path) -> None:
    model = ScriptedModel([ScriptedTurn(error=_rate_limited()) for _ in range(10)])
    session = await make_session(env(tmp_path), model, max_retries=2)
    events = await collect(session.run_turn("go"))
    assert len(of(Retrying, events)) == 2
    assert len(model.requests) == 3
    end = events[-1]
    assert isinstance(end, TurnEnded) and end.reason == "error"
    assert end.message == "acme is rate limiting requests after 3 attempts: slow down"
    await session.aclose()


async def test_a_vendor_asking_for_a_long_wait_is_not_retried(tmp_path: Path) -> None:
    model = ScriptedModel([ScriptedTurn(error=_rate_limited(retry_after=3600))])
    session = await make_session(env(tmp_path), model, retry_max_delay=60.0)
    events = await collect(session.run_turn("go"))
    assert of(Retrying, events) == []
    assert isinstance(events[-1], TurnEnded) and events[-1].reason == "error"
    await session.aclose()


async def test_jittered_delays_stay_under_the_configured_cap(tmp_path: Path) -> None:
    model = ScriptedModel(
        [ScriptedTurn(error=_rate_limited(retry_after=None)) for _ in range(3)]
        + [ScriptedTurn(text="ok")]
    )
    session = await make_session(
        env(tmp_path), model, retry_base_delay=0.001, retry_max_delay=0.002
    )
    events = await collect(session.run_turn("go"))
    delays = [r.delay for r in of(Retrying, events)]
    assert len(delays) == 3 and all(0 <= d <= 0.002 for d in delays)
    assert events[-1] == TurnEnded(reason="end_turn")
    await session.aclose()


async def test_overflow_without_compaction_ends_at_once(tmp_path: Path) -> None:
    model = ScriptedModel([ScriptedTurn(error=_overflow()), ScriptedTurn(text="never")])
    session = await make_session(env(tmp_path), model)
    events = await collect(session.run_turn("go"))
    assert len(model.requests) == 1
    end = events[-1]
    assert isinstance(end, TurnEnded) and end.reason == "error"
    assert end.message is not None and "context window" in end.message
    await session.aclose()


class _CompactingShaper(ContextShaper):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def compact_for_overflow(
        self, transcript: Transcript, ctx: ShapeContext, error: ProviderError
    ) -> bool:
        self.calls += 1
        return True


async def test_overflow_compacts_once_retries_once_then_gives_a_clear_error(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([ScriptedTurn(error=_overflow()) for _ in range(5)])
    session = await make_session(env(tmp_path), model)
    shaper = _CompactingShaper()
    session._shaper = shaper  # pyright: ignore[reportPrivateUsage]
    events = await collect(session.run_turn("go"))
    assert shaper.calls == 1
    assert len(model.requests) == 2
    assert of(Retrying, events) == []
    end = events[-1]
    assert isinstance(end, TurnEnded) and end.reason == "error"
    assert end.error is not None and end.error.kind == "context_overflow"
    await session.aclose()


async def test_overflow_finish_reason_is_treated_as_overflow(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            [TextDelta(text="cut"), Finish(reason="context_overflow")],
            ScriptedTurn(text="recovered"),
        ]
    )
    session = await make_session(env(tmp_path), model)
    shaper = _CompactingShaper()
    session._shaper = shaper  # pyright: ignore[reportPrivateUsage]
    events = await collect(session.run_turn("go"))
    assert shaper.calls == 1
    assert events[-1] == TurnEnded(reason="end_turn")
    assert [m.text for m in session.history()] == ["go", "recovered"]
    await session.aclose()


class _TruncatingModel(ScriptedModel):
    """Breaks the adapter contract once: its first stream stops without a `Finish` (the
    ScriptedModel itself always ends a turn with one)."""

    def __init__(self) -> None:
        super().__init__([ScriptedTurn(text="whole")])
        self._truncated = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if not self._truncated:
            self._truncated = True
            self.requests.append(request)
            yield TextDelta(text="trunc")
            return
        async for event in super().stream(request):
            yield event


async def test_a_stream_without_finish_is_a_retryable_network_failure(tmp_path: Path) -> None:
    model = _TruncatingModel()
    session = await make_session(env(tmp_path), model)
    events = await collect(session.run_turn("go"))
    assert [r.error.kind for r in of(Retrying, events)] == ["network"]
    assert session.history()[-1].text == "whole"
    await session.aclose()
