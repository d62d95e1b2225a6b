"""When a failed model call is worth repeating, how long to wait first, and how to say it failed.

Backoff is exponential with full jitter (a uniform wait between zero and the exponential cap), so
many sessions hitting one rate limit do not retry in lockstep. A vendor's `retry_after` wins over
the computed wait; a vendor asking for more than `max_delay` is not retried at all, because
sitting silent for minutes is worse than telling the user.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_never

from providers.types import ProviderError


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    max_retries: int = 4
    """Retries after the first attempt (so at most `max_retries + 1` calls)."""
    base_delay: float = 1.0
    """The jitter cap for the first retry, in seconds; it doubles each retry."""
    max_delay: float = 60.0
    """No single wait is longer than this."""

    def delay(
        self, retry_number: int, error: ProviderError, *, rand: Callable[[], float] = random.random
    ) -> float | None:
        """Seconds to wait before retry `retry_number` (1-based), or None when the error should
        not be retried (not retryable, attempts used up, or the vendor asks for too long)."""
        if not error.retryable or retry_number > self.max_retries:
            return None
        if error.retry_after is not None:
            if error.retry_after > self.max_delay:
                return None
            return max(0.0, error.retry_after)
        cap = min(self.max_delay, self.base_delay * (2 ** (retry_number - 1)))
        return cap * rand()


def describe_error(error: ProviderError, *, attempts: int = 1) -> str:
    """One clear sentence for the user about a model call that ended a turn."""
    who = error.provider or "the provider"
    tried = f" after {attempts} attempts" if attempts > 1 else ""
    match error.kind:
        case "auth":
            return f"{who} rejected the credentials: {error.message}. Check the API key."
        case "rate_limit":
            return f"{who} is rate limiting requests{tried}: {error.message}"
        case "context_overflow":
            return (
                "The conversation no longer fits in the model's context window "
                f"and could not be shortened enough: {error.message}"
            )
        case "invalid_request":
            return f"{who} rejected the request: {error.message}"
        case "server":
            return f"{who} had a server error{tried}: {error.message}"
        case "network":
            return f"Could not reach {who}{tried}: {error.message}"
        case "abort":
            return f"The model call was aborted: {error.message}"
        case "unknown":
            return f"The model call failed{tried}: {error.message}"
        case _:
            assert_never(error.kind)
