"""Token estimates and the usage-anchored context account."""

from __future__ import annotations

import pytest

from agent.context.tokens import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    ContextAccount,
    MessageEstimate,
    TokenCounter,
    part_tokens,
    request_overhead,
    text_tokens,
)
from providers.types import (
    ImagePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)


def _user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def _assistant(text: str) -> Message:
    return Message(role="assistant", parts=[TextPart(text=text)])


def _tool(call_id: str, text: str) -> Message:
    result = ToolResultPart(tool_call_id=call_id, name="read", content=[TextPart(text=text)])
    return Message(role="tool", parts=[result])


def test_text_is_about_four_characters_a_token_rounded_up() -> None:
    assert text_tokens("") == 0
    assert text_tokens("abcd") == 1
    assert text_tokens("abcde") == 2
    assert text_tokens("x" * 4_000) == 1_000


def test_images_cost_a_flat_charge_and_blobs_are_not_counted() -> None:
    image = ImagePart(media_type="image/png", data="A" * 1_000_000)
    assert part_tokens(image) == IMAGE_TOKENS
    reasoning = ReasoningPart(text="", provider_metadata={"anthropic": {"signature": "s" * 5_000}})
    assert part_tokens(reasoning) == 0
    call = ToolCallPart(id="c1", name="read", arguments={"path": "a" * 400})
    assert part_tokens(call) > 100
    result = ToolResultPart(
        tool_call_id="c1", name="read", content=[TextPart(text="x" * 400), image]
    )
    assert part_tokens(result) >= 100 + IMAGE_TOKENS


def test_the_counter_caches_by_identity_not_by_equality() -> None:
    counter = TokenCounter()
    message = _user("x" * 400)
    assert counter.message(message) == MESSAGE_OVERHEAD + 100
    twin = _user("x" * 400)
    assert counter.messages([message, twin]) == 2 * (MESSAGE_OVERHEAD + 100)
    assert counter.result_tokens(_tool("c", "y" * 80)) == (20,)


def test_an_incremental_estimate_of_2000_messages_estimates_only_the_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What keeps it well under a millisecond (measured by `bench/context.py`, not here).
    history = [
        _user("question " * 50) if i % 2 else _tool(f"c{i}", "out " * 500) for i in range(2_000)
    ]
    counter = TokenCounter()
    before = counter.messages(history)
    estimate = counter._estimate  # pyright: ignore[reportPrivateUsage]
    estimated: list[Message] = []

    def counting(message: Message) -> MessageEstimate:
        estimated.append(message)
        return estimate(message)

    monkeypatch.setattr(counter, "_estimate", counting)
    history.append(_assistant("one more"))
    assert counter.messages(history) == before + MESSAGE_OVERHEAD + 2
    assert estimated == [history[-1]]
    assert counter.messages(history) == before + MESSAGE_OVERHEAD + 2
    assert estimated == [history[-1]]


def test_request_overhead_counts_system_and_tools() -> None:
    tool = ToolSpec(name="read", description="d" * 400, input_schema={"type": "object"})
    assert request_overhead("s" * 400, [tool]) > 200


def test_the_account_is_a_plain_estimate_until_usage_is_reported() -> None:
    account = ContextAccount()
    history = [_user("x" * 4_000)]
    assert account.estimate(history) == MESSAGE_OVERHEAD + 1_000
    # A call that reported nothing leaves it a plain estimate.
    account.record(history, None)
    assert account.estimate(history) == MESSAGE_OVERHEAD + 1_000


def test_reported_usage_is_the_ground_truth_plus_what_was_appended_since() -> None:
    account = ContextAccount()
    sent = [_user("x" * 4_000)]
    occupied = account.record(sent, Usage(input_tokens=1_500, output_tokens=40), overhead=10)
    assert occupied == 1_540
    reply = _assistant("r" * 160)
    result = _tool("c1", "y" * 400)
    grown = [*sent, reply, result]
    # The reply is the call's output (already counted); only the tool message is new.
    assert account.estimate(grown, overhead=10) == 1_540 + MESSAGE_OVERHEAD + 8 + 100


def test_the_account_falls_back_when_history_no_longer_extends_what_was_sent() -> None:
    account = ContextAccount()
    first = _user("x" * 4_000)
    account.record([first, _assistant("a")], Usage(input_tokens=9_999, output_tokens=1))
    other = [_user("y" * 40)]
    assert account.estimate(other) == MESSAGE_OVERHEAD + 10
    rewritten = [first, _assistant("b"), _user("z")]
    assert account.estimate(rewritten) == TokenCounter().messages(rewritten)
    account.reset()
    assert account.estimate([first]) == MESSAGE_OVERHEAD + 1_000
