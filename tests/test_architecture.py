"""The package arrows and the vendor-SDK boundary, checked by import-linter from the suite."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        exit_code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    finally:
        os.chdir(cwd)
    report = capsys.readouterr().out
    assert exit_code == 0, report
    assert "0 broken" in report


SELF_CONTAINED = ("tests", "scripts", "bench", ".ci")
"""What a fresh clone runs: none of it may read a folder beside or above the checkout."""
OUTSIDE_PATHS = re.compile(r"""/work/shared(?![-\w])|\.\./shared\b|parent / ["']shared["']""")


def test_tests_scripts_and_benchmarks_read_nothing_outside_the_repository() -> None:
    offenders: list[str] = []
    for folder in SELF_CONTAINED:
        for path in sorted((ROOT / folder).rglob("*")):
            if "node_modules" in path.parts or not path.is_file():
                continue
            if path.suffix not in {".py", ".mjs", ".js", ".sh", ".toml", ".json", ""}:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            offenders += [
                f"{path.relative_to(ROOT)}: {match.group()}"
                for match in OUTSIDE_PATHS.finditer(text)
            ]
    offenders = [o for o in offenders if not o.startswith("tests/test_architecture.py")]
    assert offenders == []
