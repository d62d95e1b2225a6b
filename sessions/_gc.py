"""Pausing the cyclic garbage collector while parsing.

Reading a long transcript allocates hundreds of thousands of dicts, strings and dataclasses, none
of them in reference cycles; each allocation burst triggers collections that rescan everything
allocated so far. Measured on a 10,000-entry file: ~40% of the resume time. Pausing collection for
the parse and restoring it after is the standard remedy (the objects are freed by reference
counting either way).
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Generator[None, None, None]:
    """Disable cyclic collection inside the block if it was enabled; re-enable it after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
