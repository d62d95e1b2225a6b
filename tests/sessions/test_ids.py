from __future__ import annotations

import re
import time
import uuid

import pytest

from sessions import ids as ids_module
from sessions import new_id


def test_ids_are_uuidv7_and_sort_by_creation() -> None:
    made = [new_id() for _ in range(5_000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)
    for identifier in made[:50]:
        parsed = uuid.UUID(identifier)
        assert parsed.version == 7
        assert parsed.variant == uuid.RFC_4122
        assert re.fullmatch(
            r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", identifier
        )
    now_ms = time.time_ns() // 1_000_000
    assert abs(int(made[-1].replace("-", "")[:12], 16) - now_ms) < 5_000


def test_ids_stay_ordered_when_the_clock_stands_still_or_steps_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter([2_000_000_000_000_000_000] * 3 + [1_000_000_000_000_000_000] * 3)
    monkeypatch.setattr(ids_module.time, "time_ns", lambda: next(clock))
    made = [new_id() for _ in range(6)]
    assert made == sorted(made)
    assert len(set(made)) == 6


def test_ids_load_without_the_store() -> None:
    # The ACP start-up path mints the first session's id before the store has loaded.
    import subprocess
    import sys

    code = (
        "import sys, sessions.ids; sessions.ids.new_id(); "
        "print(sorted(m for m in sys.modules if m.startswith('sessions') or m == 'orjson'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "['sessions', 'sessions.ids']"
