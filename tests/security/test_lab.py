"""The adversarial lab suite: every row of every table, run for real (see `tests.security.lab`).

Rows come from one module per class (`rows_escapes`, `rows_smuggling`, `rows_outside`; the
sandbox, protected paths, trust, reads and fetches add theirs); `ROWS` is their concatenation
and ids must be unique."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.security import rows_escapes, rows_outside, rows_smuggling
from tests.security.lab import Row, check, make_templates, run_row

ROWS: list[Row] = [*rows_escapes.ROWS, *rows_smuggling.ROWS, *rows_outside.ROWS]


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lab-templates")
    make_templates(root)
    return root


def test_row_ids_are_unique_and_the_suite_is_large_enough() -> None:
    counts = Counter(row.id for row in ROWS)
    assert [row_id for row_id, count in counts.items() if count > 1] == []
    assert len(ROWS) >= 300


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.id)
def test_lab(row: Row, tmp_path: Path, templates: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check(row, run_row(row, tmp_path / "lab", templates, monkeypatch))
