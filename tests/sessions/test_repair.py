"""`sessions.repair`: the request history answers every call in order, and the calls a stopped
process left open are found at the leaf."""

from __future__ import annotations

from providers.types import Message, TextPart, ToolCallPart, ToolResultPart
from sessions import INTERRUPTED_BY_STOP, MessageEntry
from sessions.repair import Memo, join_results, unanswered_at_leaf


def call(call_id: str) -> ToolCallPart:
    return ToolCallPart(id=call_id, name="probe", arguments={})


def result(call_id: str, text: str = "ok") -> ToolResultPart:
    return ToolResultPart(tool_call_id=call_id, name="probe", content=[TextPart(text=text)])


def user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def assistant(*call_ids: str) -> Message:
    return Message(role="assistant", parts=[call(c) for c in call_ids])


def tool(*results: ToolResultPart) -> Message:
    return Message(role="tool", parts=list(results))


def test_a_valid_history_comes_back_as_the_same_objects() -> None:
    history = [user("a"), assistant("1", "2"), tool(result("1"), result("2")), user("b")]
    joined = join_results(history)
    assert joined == history
    assert all(a is b for a, b in zip(joined, history, strict=True))


def test_results_stored_one_by_one_are_joined_in_call_order_and_kept_between_calls() -> None:
    history = [user("a"), assistant("1", "2", "3"), tool(result("3")), tool(result("1"))]
    history.append(tool(result("2"), result("1", "a second answer is ignored")))
    memo: Memo = {}
    positions = list(range(len(history)))
    joined = join_results(history, positions, memo)
    assert joined[2] == tool(result("1"), result("2"), result("3"))
    assert join_results(history, positions, memo)[2] is joined[2]  # identity caches keep hitting


def test_missing_results_are_interrupted_and_stray_ones_left_out() -> None:
    history = [
        tool(result("nobody")),
        user("a"),
        assistant("1", "2"),
        tool(result("2"), result("elsewhere")),
        user("b"),
        assistant(),
        tool(result("1")),
        assistant("3"),
    ]
    interrupted = ToolResultPart(
        tool_call_id="1", name="probe", content=[TextPart(text=INTERRUPTED_BY_STOP)], is_error=True
    )
    joined = join_results(history)
    roles = ["user", "assistant", "tool", "user", "assistant", "assistant", "tool"]
    assert [m.role for m in joined] == roles
    assert joined[2] == tool(interrupted, result("2"))
    last = joined[-1].parts[0]
    assert isinstance(last, ToolResultPart) and last.text == INTERRUPTED_BY_STOP


def test_the_calls_left_open_at_the_leaf() -> None:
    def newest_first(*messages: Message) -> list[MessageEntry]:
        return [MessageEntry(message=m, id=str(n)) for n, m in enumerate(messages)][::-1]

    assert unanswered_at_leaf(newest_first(user("a"), assistant("1", "2"))) == [
        call("1"),
        call("2"),
    ]
    left = unanswered_at_leaf(newest_first(user("a"), assistant("1", "2"), tool(result("2"))))
    assert left == [call("1")]
    done = newest_first(user("a"), assistant("1"), tool(result("1")))
    assert unanswered_at_leaf(done) == []
    assert unanswered_at_leaf(newest_first(assistant("1"), user("queued"))) == []
    assert unanswered_at_leaf([]) == []
