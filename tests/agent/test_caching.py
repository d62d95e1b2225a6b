"""Pruning that minds the prompt cache (`agent.context.caching`, `agent.context.shaper`): a rewrite
of the prompt is paid once as a cache write, so pruning waits while the cache is warm and the step
would not pay, and goes at once when the cache has gone cold or a compaction rewrote the prompt;
with caching off it prunes whenever it frees enough, as before."""

from __future__ import annotations

from collections.abc import Sequence

from agent.context import ContextShaper, ShapeContext
from agent.context.caching import CacheEconomics, CacheWarmth, always, prompt_cache
from agent.context.shaping import ShapingLimits
from agent.events import AgentEvent
from providers.catalog import Cost, ModelInfo
from providers.types import Message, PromptCache, TextPart, ToolCallPart, ToolResultPart
from providers.wire.scripted import ScriptedModel
from tests.agent.context_support import transcript_of


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _estimate(messages: Sequence[Message]) -> int:
    return 1_000 * len(messages)


def test_the_setting_becomes_the_requests_hints() -> None:
    assert prompt_cache("5m", key="s1") == PromptCache(key="s1", ttl="5m")
    assert prompt_cache("1h", key="s1") == PromptCache(key="s1", ttl="1h")
    assert prompt_cache("off", key="s1") is None


def test_prices_relative_to_input_come_from_the_catalog() -> None:
    info = ModelInfo(
        provider="anthropic", id="m", name="m", context_window=200_000, max_output=None,
        vision=False, reasoning=False, tool_call=True,
        cost=Cost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
    )  # fmt: skip
    economics = CacheEconomics("5m", info)
    assert (round(economics.read, 3), round(economics.write, 3)) == (0.1, 1.25)
    assert CacheEconomics("1h", info).write == 2.0
    automatic = ModelInfo(
        provider="openai", id="m", name="m", context_window=400_000, max_output=None,
        vision=False, reasoning=False, tool_call=True,
        cost=Cost(input=1.25, output=10.0, cache_read=0.125),
    )  # fmt: skip
    assert CacheEconomics("5m", automatic).write == 1.0  # what is not cached costs the input


def test_a_warm_cache_waits_a_cold_one_prunes() -> None:
    clock = Clock()
    warmth = CacheWarmth("5m", clock)
    messages = [Message(role="user", parts=[TextPart(text="x")])] * 40

    def check() -> object:
        return warmth.prune_check(
            context_tokens=60_000, threshold=160_000, info=None, estimate=_estimate
        )

    assert check() is always  # the first request in this process: nothing known to be cached
    warmth.sent()
    pays = check()
    assert callable(pays) and pays is not always
    # 20k tokens freed, the prompt written again from message 10 on (30k - 20k): not yet.
    assert pays(20_000, 10, messages) is False
    clock.now += 299
    assert check() is not always
    clock.now += 2  # no request for longer than the cache lives
    assert check() is always
    warmth.sent()
    warmth.rewritten()  # a compaction: the prompt is new anyway
    assert check() is always
    assert (
        CacheWarmth("off", clock).prune_check(
            context_tokens=60_000, threshold=160_000, info=None, estimate=_estimate
        )
        is None
    )  # no cache to mind: prune whenever it frees enough


def test_a_step_that_clearly_pays_goes_once_it_has_been_carried_long_enough() -> None:
    warmth = CacheWarmth("5m", Clock())
    warmth.prune_check(context_tokens=10_000, threshold=160_000, info=None, estimate=_estimate)
    warmth.sent()
    messages = [Message(role="user", parts=[TextPart(text="x")])] * 40
    answers: list[bool] = []
    for _ in range(12):
        pays = warmth.prune_check(
            context_tokens=10_000, threshold=160_000, info=None, estimate=_estimate
        )
        assert callable(pays)
        # 30k freed, 5k written again (the last 35 messages less what was freed)
        answers.append(pays(30_000, 5, messages))
        warmth.sent()
        if answers[-1]:
            break
    # Carrying 30k tokens costs 3k a call; one write of 5k at 1.15 is 5.75k: the second call.
    assert answers == [False, True]


def _tool_round(n: int, size: int) -> list[Message]:
    call = ToolCallPart(id=f"c{n}", name="read", arguments={"path": f"f{n}"})
    result = ToolResultPart(tool_call_id=f"c{n}", name="read", content=[TextPart(text="x" * size)])
    return [
        Message(role="assistant", parts=[call]),
        Message(role="tool", parts=[result]),
    ]


async def test_the_shaper_prunes_when_the_cache_went_cold_not_before() -> None:
    clock = Clock()
    limits = ShapingLimits(protect_tokens=2_000, prune_minimum_tokens=1_000)
    shaper = ContextShaper(limits=limits, cache="5m", clock=clock)
    events: list[AgentEvent] = []
    model = ScriptedModel()
    ctx = ShapeContext(model=model, model_info=None, context_tokens=5_000, emit=events.append)
    messages = [Message(role="user", parts=[TextPart(text="go")])]
    for n in range(3):
        messages += _tool_round(n, 4_000)  # 1,000 tokens each
    transcript = await transcript_of(*messages)
    await shaper.shape_request(transcript, ctx)  # first request: cold, prunes what it may
    first = set(shaper._pruned)  # pyright: ignore[reportPrivateUsage]
    for n in range(3, 8):
        for message in _tool_round(n, 4_000):
            await transcript.append(message)
        clock.now += 10
        await shaper.shape_request(transcript, ctx)
    warm = set(shaper._pruned)  # pyright: ignore[reportPrivateUsage]
    assert warm == first, "a warm cache is not rewritten for a small saving"
    clock.now += 301
    await shaper.shape_request(transcript, ctx)
    assert set(shaper._pruned) > warm  # pyright: ignore[reportPrivateUsage]

    off = ContextShaper(limits=limits, cache="off", clock=clock)
    await off.shape_request(transcript, ctx)
    assert off._pruned  # pyright: ignore[reportPrivateUsage]
