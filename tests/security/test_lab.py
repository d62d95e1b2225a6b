"""The adversarial lab suite: every row of every table, run for real (see `tests.security.lab`).

Rows come from one module per class of the issue (`rows_escapes`, `rows_smuggling`,
`rows_outside`, ...); `ROWS` is their concatenation, ids must be unique, and every class of
attack the issue lists has rows."""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security import (
    lab_sandbox,
    lab_session,
    rows_escapes,
    rows_outside,
    rows_sandbox,
    rows_secrets,
    rows_smuggling,
    rows_tools,
    rows_trust,
)
from tests.security.lab import Row, check, make_templates, run_row

assert lab_sandbox.EXECUTORS is lab_session.EXECUTORS  # the runners register on import

ROWS: list[Row] = [
    *rows_escapes.ROWS,
    *rows_smuggling.ROWS,
    *rows_outside.ROWS,
    *rows_sandbox.ROWS,
    *rows_trust.ROWS,
    *rows_tools.ROWS,
    *rows_secrets.ROWS,
]

ISSUE_CLASSES: dict[str, str] = {
    # class: the issue's words (issue 12, the list of what did not hold)
    "repo-grants": "A cloned repository can grant itself everything.",
    "model-grants": "The model can grant itself everything.",
    "outside-write": "A write outside asks only for tool paths and literal redirections.",
    "allow-smuggle": "Allow rules smuggle code.",
    "deny-escape": "Deny rules are escaped by syntax.",
    "ask-escape": "git's global options escape deny and ask rules for `Bash(git push *)`.",
    "secrets": "Secrets leak.",
    "fetch": "Fetch reaches loopback, private and link-local addresses, follows redirects.",
    "hard-link": "Hard links write through to files outside.",
    "rule-proposal": "A file named `**` makes always allow propose `Edit(./**)`.",
    "mcp-names": "MCP server names are rewritten into tool names.",
    "control": "Controls: legitimate work still runs.",
}

LAB_PARENT = Path("/var/tmp")
"""Not the temp dir, which the command sandbox lets commands write."""


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lab-templates")
    make_templates(root)
    return root


@pytest.fixture
def lab_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="earshot-lab-", dir=LAB_PARENT)).resolve()
    temp = Path(tempfile.gettempdir()).resolve()
    assert temp not in (root, *root.parents), f"the lab must be outside the temp dir {temp}"
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_row_ids_are_unique_and_the_suite_is_large_enough() -> None:
    counts = Counter(row.id for row in ROWS)
    assert [row_id for row_id, count in counts.items() if count > 1] == []
    assert len(ROWS) >= 300


def test_every_class_of_the_issue_has_rows() -> None:
    per_class = Counter(row.cls for row in ROWS)
    assert set(per_class) == set(ISSUE_CLASSES)
    assert min(per_class.values()) >= 1


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.id)
def test_lab(row: Row, lab_root: Path, templates: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check(row, run_row(row, lab_root, templates, monkeypatch))
