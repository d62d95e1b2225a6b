"""Overflow recovery: a `context_overflow` from any vendor compacts and retries exactly once.

The error texts are SYNTHETIC: written from providers.md section 8 (the texts each vendor is known
to send), classified by the real `providers.errors.classify`, not recorded from a live API.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.context.compaction import PREAMBLE_OPENING, is_summary_request
from agent.events import CompactionFinished, CompactionStarted, TextChunk, TurnEnded
from providers.errors import classify
from providers.types import ErrorEvent, Finish, ProviderError, TextDelta
from providers.wire.scripted import ScriptedModel, ScriptedTurn, TurnSpec
from sessions import CompactionEntry
from tests.agent.context_support import SUMMARY, catalog
from tests.agent.loop_support import collect, env, make_session, of


@dataclass(frozen=True)
class Case:
    name: str
    provider: str
    status: int | None
    message: str
    code: str | None = None
    limit: int | None = None
    """The window the message states, if any."""


CASES = [
    Case(
        "openai chat",
        "openai",
        400,
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130412 tokens. Please reduce the length of the messages.",
        "context_length_exceeded",
        128_000,
    ),
    Case(
        "openai responses",
        "openai",
        400,
        "Your input exceeds the context window of this model. Please adjust your input and "
        "try again.",
        "context_length_exceeded",
    ),
    Case(
        "anthropic",
        "anthropic",
        400,
        "prompt is too long: 210417 tokens > 200000 maximum",
        "invalid_request_error",
        200_000,
    ),
    Case(
        "anthropic max_tokens",
        "anthropic",
        400,
        "input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000, "
        "decrease input length or `max_tokens` and try again",
        "invalid_request_error",
        200_000,
    ),
    Case(
        "gemini",
        "google",
        400,
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        "INVALID_ARGUMENT",
        1_048_576,
    ),
    Case(
        "gemini without count",
        "google",
        400,
        "The input token count exceeds the maximum number of tokens allowed.",
        "INVALID_ARGUMENT",
    ),
    Case(
        "openrouter",
        "openrouter",
        400,
        "This endpoint's maximum context length is 131072 tokens. However, you requested about "
        '140000 tokens. Please reduce the length or use the "middle-out" transform.',
        None,
        131_072,
    ),
    Case(
        "xai",
        "xai",
        400,
        "This model's maximum prompt length is 131072 but the request contains 140000 tokens.",
        None,
        131_072,
    ),
    Case("llama.cpp", "llama", 400, "the request exceeds the available context size"),
    Case("bedrock", "amazon-bedrock", 400, "Input is too long for requested model."),
    Case("cerebras bare", "cerebras", 400, "400 (no body)"),
]


def _error(case: Case) -> ProviderError:
    error = classify(
        provider=case.provider, status=case.status, message=case.message, code=case.code
    )
    assert error.kind == "context_overflow", f"{case.name} must classify as an overflow"
    return error


def _with_history(*overflow_turns: TurnSpec) -> list[TurnSpec]:
    """Three answered prompts (something to compact), then the turns under test."""
    return [ScriptedTurn(text=f"answer {n} " + "x" * 400) for n in range(3)] + list(overflow_turns)


async def _three_prompts(session: object) -> None:
    from agent.session import AgentSession

    assert isinstance(session, AgentSession)
    for n in range(3):
        events = await collect(session.run_turn(f"question {n}"))
        assert events[-1] == TurnEnded(reason="end_turn")


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_an_overflow_from_any_vendor_compacts_and_retries_once(
    tmp_path: Path, case: Case
) -> None:
    model = ScriptedModel(
        _with_history(
            ScriptedTurn(error=_error(case)),
            ScriptedTurn(text=SUMMARY),
            ScriptedTurn(text="recovered"),
        )
    )
    session = await make_session(env(tmp_path), model, catalog=catalog(2_000_000))
    await _three_prompts(session)
    events = await collect(session.run_turn("question 3"))

    assert events[-1] == TurnEnded(reason="end_turn")
    assert [e.text for e in of(TextChunk, events)] == ["recovered"]
    started, finished = of(CompactionStarted, events), of(CompactionFinished, events)
    assert len(started) == len(finished) == 1 and finished[0].ok and not started[0].manual
    requests = model.requests[3:]
    assert len(requests) == 3 and is_summary_request(requests[1])
    assert "question 0" in requests[1].messages[0].text
    retried = requests[2]
    assert retried.messages[0].text.startswith(PREAMBLE_OPENING)
    assert SUMMARY in retried.messages[0].text
    assert retried.messages[-1].text == "question 3"
    assert [m.text for m in session.history()][-2:] == ["question 3", "recovered"]
    entries = [
        e for e in session.transcript.stored.path_entries() if isinstance(e, CompactionEntry)
    ]
    assert len(entries) == 1 and entries[0].first_kept_id is not None
    await session.aclose()


async def test_an_overflow_mid_stream_is_recovered_the_same_way(tmp_path: Path) -> None:
    # OpenAI Responses reports an overflow in-stream (`response.failed`, HTTP 200).
    in_stream = classify(
        provider="openai",
        status=None,
        message="Your input exceeds the context window of this model.",
        code="context_length_exceeded",
    )
    model = ScriptedModel(
        _with_history(
            [TextDelta(text="partial "), ErrorEvent(error=in_stream), Finish(reason="error")],
            ScriptedTurn(text=SUMMARY),
            ScriptedTurn(text="whole"),
        )
    )
    session = await make_session(env(tmp_path), model, catalog=catalog(2_000_000))
    await _three_prompts(session)
    events = await collect(session.run_turn("question 3"))
    assert events[-1] == TurnEnded(reason="end_turn")
    assert of(CompactionFinished, events)[0].ok
    history = session.history()
    assert history[0].text.startswith(PREAMBLE_OPENING)
    assert [m.text for m in history][-1] == "whole", "the partial attempt is not kept"
    assert all("partial" not in m.text for m in history)
    await session.aclose()


async def test_a_stop_reason_overflow_is_recovered_too(tmp_path: Path) -> None:
    # Anthropic can end a response with stop_reason `model_context_window_exceeded`.
    model = ScriptedModel(
        _with_history(
            [TextDelta(text="cut"), Finish(reason="context_overflow")],
            ScriptedTurn(text=SUMMARY),
            ScriptedTurn(text="done"),
        )
    )
    session = await make_session(env(tmp_path), model, catalog=catalog(2_000_000))
    await _three_prompts(session)
    events = await collect(session.run_turn("question 3"))
    assert events[-1] == TurnEnded(reason="end_turn")
    assert len(of(CompactionFinished, events)) == 1
    await session.aclose()


async def test_a_second_overflow_ends_the_turn_with_a_clear_error(tmp_path: Path) -> None:
    overflow = _error(CASES[2])
    model = ScriptedModel(
        _with_history(
            ScriptedTurn(error=overflow),
            ScriptedTurn(text=SUMMARY),
            ScriptedTurn(error=overflow),
            ScriptedTurn(text="never asked"),
        )
    )
    session = await make_session(env(tmp_path), model, catalog=catalog(2_000_000))
    await _three_prompts(session)
    events = await collect(session.run_turn("question 3"))
    end = events[-1]
    assert isinstance(end, TurnEnded) and end.reason == "error"
    assert end.error is not None and end.error.kind == "context_overflow"
    assert end.message is not None and "context window" in end.message
    assert len(model.requests) == 3 + 3, "one compaction, one retry, then stop"
    assert len(of(CompactionStarted, events)) == 1
    await session.aclose()


async def test_an_overflow_with_nothing_to_compact_ends_at_once(tmp_path: Path) -> None:
    model = ScriptedModel([ScriptedTurn(error=_error(CASES[0])), ScriptedTurn(text="never")])
    session = await make_session(env(tmp_path), model, catalog=catalog(2_000_000))
    events = await collect(session.run_turn("a single huge prompt"))
    end = events[-1]
    assert isinstance(end, TurnEnded) and end.reason == "error"
    assert len(model.requests) == 1
    finished = of(CompactionFinished, events)
    assert len(finished) == 1 and not finished[0].ok
    assert "nothing to compact" in (finished[0].error or "")
    await session.aclose()


async def test_a_failed_summary_on_overflow_leaves_the_earlier_part_out(tmp_path: Path) -> None:
    down = ProviderError(kind="invalid_request", message="overloaded", retryable=False)
    model = ScriptedModel(
        _with_history(
            ScriptedTurn(error=_error(CASES[2])),
            ScriptedTurn(error=down),
            ScriptedTurn(text="still here"),
        )
    )
    session = await make_session(env(tmp_path), model, catalog=catalog(2_000_000))
    await _three_prompts(session)
    events = await collect(session.run_turn("question 3"))
    assert events[-1] == TurnEnded(reason="end_turn")
    finished = of(CompactionFinished, events)
    assert len(finished) == 1 and finished[0].ok
    assert "could not be summarised (overloaded)" in finished[0].summary
    assert "- question 0" in finished[0].summary
    await session.aclose()


def test_stated_limits_are_read_from_each_vendors_message() -> None:
    for case in CASES:
        assert _error(case).context_limit == case.limit, case.name


async def test_a_transient_summary_failure_is_retried(tmp_path: Path) -> None:
    busy = ProviderError(
        kind="server", message="overloaded", retryable=True, retry_after=0.001, provider="x"
    )
    model = ScriptedModel(
        _with_history(
            ScriptedTurn(error=_error(CASES[2])),
            ScriptedTurn(error=busy),
            ScriptedTurn(text=SUMMARY),
            ScriptedTurn(text="fine"),
        )
    )
    session = await make_session(env(tmp_path), model, catalog=catalog(2_000_000))
    await _three_prompts(session)
    events = await collect(session.run_turn("question 3"))
    assert events[-1] == TurnEnded(reason="end_turn")
    finished = of(CompactionFinished, events)
    assert len(finished) == 1 and finished[0].ok and SUMMARY in finished[0].summary
    await session.aclose()
