"""The `cache` setting and what a prompt cache is worth to context shaping.

`cache` is `"5m"` (the default), `"1h"` or `"off"`: how long a provider that lets us choose
(Anthropic) keeps a written prefix, and whether earshot asks for caching at all (`"off"`: no
breakpoints, no `prompt_cache_key`, no extended retention; automatic caches still work on
their own). A tiny module: the settings read it before an editor's first `session/new` is
answered.

Shaping rewrites the prompt (pruning old tool results, compacting), and a rewritten prefix
must be written to the cache again before it can be read. `CacheEconomics` says whether a
rewrite pays: what it saves on every later call against what re-writing costs once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

if TYPE_CHECKING:
    from providers.catalog import ModelInfo
    from providers.types import Message, PromptCache

PruneCheck: TypeAlias = Callable[[int, int, Sequence["Message"]], bool]
"""`(freed, first, messages)`: may pruning free `freed` tokens by changing the prompt from
`messages[first]` on? (`agent.context.shaping.prune_tool_results`'s `accept`, with the messages.)"""

CacheSetting: TypeAlias = Literal["off", "5m", "1h"]
CACHE_SETTINGS: tuple[CacheSetting, ...] = ("off", "5m", "1h")
"""From the least kept to the most (an untrusted repository may only move down this list)."""
DEFAULT_CACHE: Final[CacheSetting] = "5m"

_TTL_SECONDS: Final[dict[CacheSetting, float]] = {"off": 0.0, "5m": 300.0, "1h": 3600.0}

# Vendor price ratios to the input price, used when the catalog does not say: a cache read
# costs a tenth (Anthropic, OpenAI, Gemini), a 5-minute write 1.25 times (Anthropic), an
# hour-long one twice.
_READ_RATIO: Final = 0.1
_WRITE_RATIO: Final[dict[CacheSetting, float]] = {"off": 1.0, "5m": 1.25, "1h": 2.0}


def prompt_cache(setting: CacheSetting, key: str) -> PromptCache | None:
    """The caching hints a session's requests carry (None for `"off"`)."""
    if setting == "off":
        return None
    from providers.types import PromptCache

    return PromptCache(key=key, ttl=setting)


def cache_lifetime(setting: CacheSetting) -> float:
    """Seconds after the last request when the cache may be assumed gone (0: never cached)."""
    return _TTL_SECONDS[setting]


class CacheEconomics:
    """A model's prices for cached and written input, relative to its input price."""

    def __init__(self, setting: CacheSetting, info: ModelInfo | None = None) -> None:
        read, write = _READ_RATIO, _WRITE_RATIO[setting]
        cost = info.cost if info is not None else None
        if cost is not None and cost.input:
            if cost.cache_read is not None:
                read = cost.cache_read / cost.input
            if cost.cache_write is None:
                write = 1.0  # an automatic cache: what it has not cached costs the input price
            elif setting == "5m":
                write = cost.cache_write / cost.input
        self.setting: CacheSetting = setting
        self.read = read
        """A cached token's price, as a share of a fresh one."""
        self.write = max(write, 1.0)
        """A written token's price (automatic caches charge a write as a fresh token)."""


_DEFAULT_GROWTH_TOKENS: Final = 4_000.0
"""Tokens a call adds to the context before any was measured (a tool round of a few files)."""
_MIN_GROWTH_TOKENS: Final = 500.0
_CALLS_LEFT_UNKNOWN: Final = 20.0
"""Calls a pruned result would still be sent, when the window is unknown."""
_MARGIN: Final = 2.0
"""How many times the write a pruning step must save (measured with `bench/cost.py`: at 1x,
sessions with a 200k window paid more in writes than the pruning saved)."""


def always(freed: int, first: int, messages: Sequence[Message]) -> bool:
    """A `PruneCheck` that always agrees (the prompt is written anew anyway)."""
    return True


class CacheWarmth:
    """What a context shaper knows of the provider's cache of its prompt: when it last sent
    one, whether the prompt was just rewritten, how fast the context grows; and so whether a
    pruning step pays (`prune_check`)."""

    def __init__(self, setting: CacheSetting, clock: Callable[[], float] = time.monotonic) -> None:
        self.setting: CacheSetting = setting
        self._clock = clock
        self._last_call_at: float | None = None
        self._rewritten = False
        self._growth = _DEFAULT_GROWTH_TOKENS
        self._last_context = 0
        self._carried = 0.0
        """What reading the prunable results has cost since the prompt was last rewritten, in
        input tokens' worth."""

    def sent(self) -> None:
        """A request went out: the cache holds its prompt from now."""
        self._last_call_at = self._clock()
        self._rewritten = False

    def rewritten(self) -> None:
        """The prompt was rewritten (a compaction): nothing of it is cached."""
        self._rewritten = True

    def forget(self) -> None:
        """Another model: it has no cache of this prompt."""
        self._last_call_at = None

    def cold(self) -> bool:
        last = self._last_call_at
        return (
            self._rewritten or last is None or self._clock() - last > cache_lifetime(self.setting)
        )

    def prune_check(
        self,
        *,
        context_tokens: int,
        threshold: int | None,
        info: ModelInfo | None,
        estimate: Callable[[Sequence[Message]], int],
    ) -> PruneCheck | None:
        """Whether pruning may advance on this call (None: whenever it frees enough, as without
        a prompt cache). Every pruning step costs a write of the prompt from the first stub on,
        so pruning waits until the cache has gone cold anyway (no call for longer than it
        lives, a compaction, the first call in this process or with this model) or until what
        it saves on the calls left before the next compaction (at `threshold`) is clearly more
        than the write: few, large steps. Near the threshold that is rarely so: the compaction
        that follows rewrites less than a pruning step would (the verbatim tail only) and
        reads the rest from the cache. `context_tokens` is what the previous call occupied."""
        if context_tokens > 0:  # 0: nothing measured yet in this turn
            if self._last_context and context_tokens > self._last_context:
                growth = context_tokens - self._last_context
                self._growth = max(_MIN_GROWTH_TOKENS, (self._growth * 3 + growth) / 4)
            self._last_context = context_tokens
        else:
            context_tokens = self._last_context
        if self.setting == "off":
            return None
        if self.cold():
            self._carried = 0.0
            return always  # the prompt is written anew anyway
        economics = CacheEconomics(self.setting, info)
        growth = self._growth
        calls_left = (
            _CALLS_LEFT_UNKNOWN
            if threshold is None
            else max(1.0, (threshold - context_tokens) / growth)
        )

        def pays(freed: int, first: int, messages: Sequence[Message]) -> bool:
            # Until the next compaction (which drops them anyway) the pruned results would be
            # read from the cache on every call; the write is paid once, now. Both sides are
            # guesses (how many calls are left is), so the saving must be clearly larger. And
            # like an order quantity, the step waits until carrying what it would free has
            # already cost about one write: no two steps a call or two apart.
            self._carried += freed * economics.read
            write = max(0, estimate(messages[first:]) - freed) * (economics.write - economics.read)
            if self._carried < write or freed * economics.read * calls_left <= _MARGIN * write:
                return False
            self._carried = 0.0
            return True

        return pays
