"""The shapers end to end: a long session never overflows, compacts when it should, and a
reloaded session builds the same request history."""

from __future__ import annotations

import re
from pathlib import Path

from agent.context import ContextShaper, ShapeContext
from agent.context.compaction import PREAMBLE_OPENING, is_summary_request
from agent.context.tokens import ContextAccount
from agent.events import (
    AgentEvent,
    CompactionFinished,
    CompactionStarted,
    TurnEnded,
    UsageUpdated,
)
from providers.catalog import ASSUMED_CONTEXT_WINDOW
from providers.types import Message, TextPart, Usage
from providers.wire.scripted import ScriptedModel
from sessions import CompactionEntry, SessionStore
from tests.agent.context_support import (
    SUMMARY,
    VendorTokenizer,
    agentic_model,
    catalog,
    dump_tool,
    request_tokens,
    transcript_of,
)
from tests.agent.loop_support import collect, env, make_session, of

WINDOW = 16_000


async def test_a_300_turn_session_never_sends_a_request_over_the_window(tmp_path: Path) -> None:
    where = env(tmp_path)
    # The vendor counts with its own tokenizer, reports that as usage and rejects a request
    # over the window by it: the agent's estimate alone would overflow.
    vendor = VendorTokenizer()
    model = ScriptedModel(agentic_model(window=WINDOW, tokenizer=vendor))
    session = await make_session(
        where, model, tools=[dump_tool], catalog=catalog(WINDOW), system_prompt="You help."
    )
    finished: list[CompactionFinished] = []
    started: list[CompactionStarted] = []
    for turn in range(300):
        events = await collect(session.run_turn(f"turn {turn}: " + "please dump it. " * 20))
        assert events[-1] == TurnEnded(reason="end_turn")
        finished += of(CompactionFinished, events)
        started += of(CompactionStarted, events)

    threshold = int(WINDOW * 0.8)
    sizes = [vendor.request(request) for request in model.requests]
    estimates = [request_tokens(request) for request in model.requests]
    undercount = min(s / e for s, e in zip(sizes, estimates, strict=True) if e > 2_000)
    assert threshold * undercount > WINDOW, "compacting by the estimate alone would overflow"
    # Every request the vendor received fitted by its count (none was rejected).
    assert max(sizes) <= WINDOW
    normal = [r for r in model.requests if not is_summary_request(r)]
    # Compaction starts at the threshold by the vendor's count, within one call's misestimate.
    assert max(vendor.request(r) for r in normal) <= threshold + WINDOW // 40

    # Compacted when it had to, and only then.
    assert len(started) == len(finished) >= 3
    assert all(not event.manual for event in started)
    assert all(event.ok for event in finished)
    for event in finished:
        assert event.tokens_before is not None and event.tokens_after is not None
        assert event.tokens_before > threshold > event.tokens_after
    summaries = [r for r in model.requests if is_summary_request(r)]
    assert len(summaries) == len(finished)
    entries = [
        e for e in session.transcript.stored.path_entries() if isinstance(e, CompactionEntry)
    ]
    assert len(entries) == len(finished)
    assert all(SUMMARY in entry.summary for entry in entries)
    assert "src/file1.py" in entries[-1].summary, "files touched survive every compaction"

    # Requests after a compaction start from its preamble.
    last = normal[-1]
    assert last.messages[0].text.startswith(PREAMBLE_OPENING)

    # The stored history is complete, and a reload rebuilds exactly the same request history.
    before = session.history()
    all_messages = [e for e in session.transcript.stored.path_entries() if e.kind == "message"]
    assert len(all_messages) == 300 * 4
    shaped_before = ContextShaper().shape(before, WINDOW)
    session_id = session.id
    await session.aclose()
    reopened = await SessionStore(where.data / "sessions").open(session_id)
    after = reopened.history()
    assert after == before
    assert ContextShaper().shape(after, WINDOW) == shaped_before
    await reopened.aclose()


async def test_usage_events_report_the_context_against_the_window(tmp_path: Path) -> None:
    model = ScriptedModel(agentic_model())
    session = await make_session(
        env(tmp_path), model, tools=[dump_tool], catalog=catalog(WINDOW), system_prompt="Hi."
    )
    events = await collect(session.run_turn("dump one"))
    updates = of(UsageUpdated, events)
    assert len(updates) == 2
    first, second = updates
    assert first.context_window == WINDOW and second.context_window == WINDOW
    assert first.context_tokens == request_tokens(model.requests[0]) + 30
    assert second.context_tokens == request_tokens(model.requests[1]) + 30
    assert second.total.input_tokens == first.call.input_tokens + second.call.input_tokens
    await session.aclose()


async def test_a_window_nobody_gave_is_assumed_for_usage_and_compaction(tmp_path: Path) -> None:
    # Long answers (kept in full, unlike tool results) fill the assumed window in a few turns.
    model = ScriptedModel(agentic_model(dump_size=4_000, answer_chars=16_000))
    session = await make_session(
        env(tmp_path), model, tools=[dump_tool], catalog=catalog(None), system_prompt="Hi."
    )
    info = session.model_info
    assert info is not None and info.window_assumed
    assert info.context_window == ASSUMED_CONTEXT_WINDOW
    compacted = False
    for turn in range(12):
        events = await collect(session.run_turn(f"turn {turn}"))
        usage = of(UsageUpdated, events)
        assert usage and all(u.context_window == ASSUMED_CONTEXT_WINDOW for u in usage)
        assert all(u.context_window_assumed for u in usage)
        compacted = compacted or bool(of(CompactionStarted, events))
    # The meter's window is the one compaction works against.
    assert compacted
    assert any(is_summary_request(r) for r in model.requests)
    await session.aclose()


async def test_without_a_catalog_nothing_compacts_automatically(tmp_path: Path) -> None:
    model = ScriptedModel(agentic_model(dump_size=40_000))
    session = await make_session(env(tmp_path), model, tools=[dump_tool], system_prompt="Hi.")
    assert session.model_info is None
    for turn in range(12):
        events = await collect(session.run_turn(f"turn {turn}"))
        assert of(CompactionStarted, events) == []
    assert not any(is_summary_request(r) for r in model.requests)
    # Capping and pruning still apply (their defaults do not depend on a window).
    assert request_tokens(model.requests[-1]) < 12 * 10_000
    await session.aclose()


async def test_without_a_catalog_there_is_no_window_and_no_compaction(tmp_path: Path) -> None:
    model = ScriptedModel(agentic_model(dump_size=8_000))
    session = await make_session(env(tmp_path), model, tools=[dump_tool])
    for turn in range(5):
        events = await collect(session.run_turn(f"turn {turn}"))
        assert of(CompactionStarted, events) == []
    await session.aclose()


async def test_when_no_summary_can_be_had_an_overflow_drops_the_earlier_part(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(agentic_model(window=WINDOW, summary=""))  # empty summary: a failure
    session = await make_session(
        env(tmp_path), model, tools=[dump_tool], catalog=catalog(WINDOW), system_prompt="Hi."
    )
    outcomes: list[CompactionFinished] = []
    for turn in range(80):
        events = await collect(session.run_turn(f"turn {turn}: " + "more text " * 40))
        assert events[-1] == TurnEnded(reason="end_turn")
        outcomes += of(CompactionFinished, events)
    failed = [e for e in outcomes if not e.ok]
    dropped = [e for e in outcomes if e.ok]
    assert failed and all("empty summary" in (e.error or "") for e in failed)
    assert dropped, "an overflow with no summary available leaves the earlier part out"
    assert all("could not be summarised" in e.summary for e in dropped)
    assert "The user's requests in that part" in dropped[0].summary
    assert re.search(r"- turn \d+: more text", dropped[0].summary), "earlier requests are kept"
    summaries = sum(1 for r in model.requests if is_summary_request(r))
    assert summaries <= 2 * len(dropped) + 8, "a failing summariser is not asked on every call"
    await session.aclose()


def _texts(*sizes: int) -> list[Message]:
    return [Message(role="user", parts=[TextPart(text="x" * size)]) for size in sizes]


def test_the_account_is_the_last_report_plus_what_was_added_since() -> None:
    account = ContextAccount()
    sent = _texts(4_000)  # 1,004 estimated
    assert account.record(sent, Usage(input_tokens=1_100, output_tokens=50)) == 1_150
    reply = Message(role="assistant", parts=[TextPart(text="y" * 400)])
    grown = [*sent, reply, *_texts(396)]  # the reply is in the report; 103 estimated added
    assert account.estimate(grown) == 1_150 + 103
    assert account.ratio == 1.0, "a request this small teaches no ratio"


def test_reports_calibrate_the_estimate_of_what_they_do_not_cover() -> None:
    account = ContextAccount()
    sent = _texts(40_000)  # 10,004 estimated
    account.record(sent, Usage(input_tokens=15_006, output_tokens=0))
    assert account.ratio == 1.5
    added = [*sent, *_texts(3_984)]  # 1,000 estimated added since
    assert account.estimate(added) == 15_006 + 1_500
    account.reset()  # a compaction: the report is gone, the tokenizer is the same
    assert account.estimate(_texts(3_984)) == 1_500
    account.record(sent, Usage(input_tokens=5_000))  # counts less than the heuristic
    assert account.ratio == 1.0, "never below the heuristic: compaction may be early, not late"
    account.record(sent, Usage(input_tokens=15_006))
    account.forget()  # another model
    assert account.ratio == 1.0 and account.estimate(_texts(3_984)) == 1_000


async def test_a_model_switch_forgets_what_the_last_model_reported() -> None:
    events: list[AgentEvent] = []
    shaper = ContextShaper()
    first = ScriptedModel(model_id="one")

    def ctx(model: ScriptedModel) -> ShapeContext:
        return ShapeContext(model=model, model_info=None, context_tokens=0, emit=events.append)

    history = await transcript_of(*_texts(40_000))
    await shaper.shape_request(history, ctx(first))
    shaper.observe(Usage(input_tokens=20_008))
    assert shaper.account.ratio == 2.0
    await shaper.shape_request(history, ctx(first))
    assert shaper.account.ratio == 2.0
    await shaper.shape_request(history, ctx(ScriptedModel(model_id="two")))
    assert shaper.account.ratio == 1.0
