"""The package arrows and the vendor-SDK boundary, checked by import-linter from the suite."""

from __future__ import annotations

import os
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
