"""Time-ordered identifiers.

Session ids name files and `--continue` picks the newest session, so ids must sort by creation:
random UUIDs do not, and file mtimes tie within a millisecond (coarser on most kernels). A UUIDv7
(RFC 9562) starts with the Unix time in milliseconds; within one millisecond this module counts
up through the random bits (RFC 9562 §6.2 method 2), so ids made later in one process always sort
after earlier ones.
"""

from __future__ import annotations

import os
import threading
import time

_RANDOM_BITS = 74
"""rand_a (12 bits) + rand_b (62 bits)."""
_FRESH_MASK = (1 << (_RANDOM_BITS - 1)) - 1
"""A fresh millisecond starts in the lower half of the random space, leaving room to count up."""

_lock = threading.Lock()
_last_ms = 0
_last_random = 0


def _reset_after_fork() -> None:
    # A forked child inherits the counter; counting on from the parent's state would let parent
    # and child mint the same id within one millisecond.
    global _last_ms, _last_random
    _last_ms = 0
    _last_random = 0


os.register_at_fork(after_in_child=_reset_after_fork)


def new_id() -> str:
    """A UUIDv7 string (lowercase, hyphenated); ids made later in this process sort after earlier
    ones, also within one millisecond and if the wall clock steps back."""
    global _last_ms, _last_random
    now_ms = time.time_ns() // 1_000_000
    with _lock:
        if now_ms > _last_ms:
            random = int.from_bytes(os.urandom(10)) & _FRESH_MASK
        else:
            now_ms = _last_ms
            random = _last_random + 1
            if random >> _RANDOM_BITS:
                now_ms += 1
                random = int.from_bytes(os.urandom(10)) & _FRESH_MASK
        _last_ms, _last_random = now_ms, random
    value = (
        (now_ms & 0xFFFF_FFFF_FFFF) << 80
        | 0x7 << 76
        | (random >> 62) << 64
        | 0b10 << 62
        | (random & ((1 << 62) - 1))
    )
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
