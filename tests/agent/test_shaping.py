"""The cheap shapers: capping tool results and pruning old ones to stubs."""

from __future__ import annotations

import copy
from dataclasses import fields, replace

from agent.context.shaping import (
    CapMemo,
    PruneMemo,
    ShapingLimits,
    cap_result,
    cap_tool_results,
    describe_call,
    format_size,
    prune_tool_results,
    stub_result,
)
from agent.context.tokens import TokenCounter
from providers.types import Message, TextPart, ToolCallPart, ToolResultPart


def _call(call_id: str, name: str = "read", **arguments: str) -> Message:
    args = arguments or {"path": f"src/{call_id}.py"}
    return Message(
        role="assistant", parts=[ToolCallPart(id=call_id, name=name, arguments=dict(args))]
    )


def _result(call_id: str, text: str, name: str = "read", is_error: bool = False) -> Message:
    part = ToolResultPart(
        tool_call_id=call_id, name=name, content=[TextPart(text=text)], is_error=is_error
    )
    return Message(role="tool", parts=[part])


def _rounds(count: int, size: int, name: str = "read") -> list[Message]:
    history: list[Message] = [Message(role="user", parts=[TextPart(text="go")])]
    for number in range(count):
        call_id = f"c{number}"
        history += [_call(call_id, name), _result(call_id, "x" * size, name)]
    history.append(Message(role="assistant", parts=[TextPart(text="done")]))
    return history


def _text(message: Message) -> str:
    part = message.parts[0]
    assert isinstance(part, ToolResultPart)
    return part.text


# ------------------------------------------------------------------------------- capping


def test_a_capped_result_keeps_head_and_tail_and_states_the_cut() -> None:
    text = "HEAD" + "m" * 10_000 + "TAIL"
    part = ToolResultPart(tool_call_id="c", name="bash", content=[TextPart(text=text)])
    capped = cap_result(part, max_tokens=500, max_bytes=100_000)
    assert capped.text.startswith("HEAD") and capped.text.endswith("TAIL")
    assert len(capped.text) <= 2_000
    assert "characters cut here" in capped.text and str(len(text)) in capped.text
    assert capped.tool_call_id == "c" and capped.name == "bash"


def test_the_byte_cap_applies_to_multibyte_text() -> None:
    text = "é" * 3_000  # 3,000 characters, 6,000 bytes
    part = ToolResultPart(tool_call_id="c", name="read", content=[TextPart(text=text)])
    assert cap_result(part, max_tokens=10_000, max_bytes=8_000) is part
    capped = cap_result(part, max_tokens=10_000, max_bytes=4_000)
    assert len(capped.text.encode()) <= 4_000 + 200


def test_capping_passes_untouched_messages_through_and_never_mutates() -> None:
    history = [_call("a"), _result("a", "x" * 50), _call("b"), _result("b", "y" * 50_000)]
    snapshot = copy.deepcopy(history)
    memo = CapMemo()
    shaped = cap_tool_results(history, max_tokens=1_000, max_bytes=4_000, memo=memo)
    assert history == snapshot
    assert shaped[0] is history[0] and shaped[1] is history[1]
    assert shaped[3] is not history[3] and len(_text(shaped[3])) < 4_100
    again = cap_tool_results(history, max_tokens=1_000, max_bytes=4_000, memo=memo)
    assert again[3] is shaped[3], "the memo hands back the same capped copy"


def test_limits_scale_with_the_window() -> None:
    small = ShapingLimits.for_window(8_000)
    assert small.result_max_tokens == 800 and small.protect_tokens == 1_600
    big = ShapingLimits.for_window(1_000_000)
    assert big.result_max_tokens == 10_000 and big.protect_tokens == 40_000
    assert ShapingLimits.for_window(None) == ShapingLimits()


# ------------------------------------------------------------------------------- pruning


def test_old_results_become_one_line_stubs_and_recent_ones_stay() -> None:
    history = _rounds(10, 4_000)  # 1,000 tokens each
    outcome = prune_tool_results(history, protect_tokens=3_000, minimum_tokens=1_000)
    texts = [_text(m) for m in outcome.messages if m.role == "tool"]
    assert texts[-3:] == ["x" * 4_000] * 3
    assert texts[0] == "[tool result pruned: read src/c0.py, 4 kB; ask again if needed]"
    assert all(t.startswith("[tool result pruned") for t in texts[:7])
    assert outcome.pruned == frozenset(f"c{n}" for n in range(7))
    assert outcome.freed_tokens == 7 * 1_000
    assert len(outcome.messages) == len(history)


def test_nothing_is_pruned_unless_it_frees_the_minimum() -> None:
    history = _rounds(4, 4_000)
    outcome = prune_tool_results(history, protect_tokens=3_000, minimum_tokens=2_000)
    assert outcome.pruned == frozenset() and outcome.messages == history
    outcome = prune_tool_results(history, protect_tokens=2_000, minimum_tokens=2_000)
    assert outcome.pruned == {"c0", "c1"}


def test_pruning_only_advances_and_keeps_stubs_stable() -> None:
    history = _rounds(6, 4_000)
    memo = PruneMemo()
    counter = TokenCounter()
    first = prune_tool_results(
        history, protect_tokens=2_000, minimum_tokens=2_000, counter=counter, memo=memo
    )
    assert first.pruned == {"c0", "c1", "c2", "c3"}
    # One more round: one more result would be prunable, below the minimum: no change, and the
    # stubbed messages are the very same objects (a stable prefix for the provider's cache).
    grown = history[:-1] + [_call("c6"), _result("c6", "x" * 4_000), history[-1]]
    second = prune_tool_results(
        grown,
        protect_tokens=2_000,
        minimum_tokens=2_000,
        already_pruned=first.pruned,
        counter=counter,
        memo=memo,
    )
    assert second.pruned == first.pruned and second.freed_tokens == 0
    assert all(a is b for a, b in zip(first.messages[:-1], second.messages, strict=False))


def test_results_the_model_has_not_seen_are_never_pruned() -> None:
    # Ends with a tool message: the model has not seen that result yet.
    history = [*_rounds(3, 4_000)[:-1], _call("late"), _result("late", "z" * 40_000)]
    outcome = prune_tool_results(history, protect_tokens=0, minimum_tokens=0)
    assert _text(outcome.messages[-1]) == "z" * 40_000
    assert "late" not in outcome.pruned
    assert {"c0", "c1"} <= outcome.pruned


def test_skill_results_and_small_results_are_never_pruned() -> None:
    history = _rounds(3, 8_000, name="skill") + _rounds(3, 40)[1:]
    outcome = prune_tool_results(history, protect_tokens=0, minimum_tokens=0)
    assert outcome.pruned == frozenset()


def test_stubs_name_the_call_and_say_it_failed() -> None:
    history = [
        Message(role="user", parts=[TextPart(text="go")]),
        _call("b1", "bash", command="pytest -q   tests/"),
        _result("b1", "F" * 2_000_000, "bash", is_error=True),
        Message(role="assistant", parts=[TextPart(text="ok")]),
    ]
    outcome = prune_tool_results(history, protect_tokens=0, minimum_tokens=0)
    assert _text(outcome.messages[2]) == (
        "[tool result pruned: bash pytest -q tests/, 2.0 MB (it failed); ask again if needed]"
    )
    result = outcome.messages[2].parts[0]
    assert isinstance(result, ToolResultPart) and result.is_error and result.tool_call_id == "b1"


def test_call_descriptions_and_sizes() -> None:
    call = ToolCallPart(id="x", name="grep", arguments={"pattern": "def  main", "path": "src"})
    assert describe_call(call, "grep") == "grep src"
    assert describe_call(None, "ls") == "ls"
    long = ToolCallPart(id="y", name="fetch", arguments={"url": "https://e.com/" + "a" * 200})
    assert len(describe_call(long, "fetch")) <= 90
    assert [format_size(n) for n in (812, 12_400, 3_400_000)] == ["812 B", "12 kB", "3.4 MB"]


def test_a_stub_copies_every_field_of_the_result_and_message_it_replaces() -> None:
    # The stub is built field by field (for speed); a field added to either type must be
    # copied there too, or it would be lost from pruned results.
    assert {f.name for f in fields(ToolResultPart)} == {
        "tool_call_id",
        "name",
        "content",
        "is_error",
        "provider_metadata",
        "kind",
    }
    assert {f.name for f in fields(Message)} == {"role", "parts", "provider_metadata"}
    call = ToolCallPart(id="c1", name="read", arguments={"path": "a.py"})
    result = ToolResultPart(
        tool_call_id="c1",
        name="read",
        content=[TextPart(text="é" * 500)],
        is_error=True,
        provider_metadata={"x": {"k": 1}},
    )
    stub = stub_result(call, result)
    assert stub == replace(result, content=stub.content)
    assert stub.text == "[tool result pruned: read a.py, 1 kB (it failed); ask again if needed]"
