"""Fixtures of the print-mode tests that run the real command sandbox (Linux): a workspace
whose tests fail loudly without bubblewrap, and a directory outside it that commands may not
write. A test module imports the ones it uses by name."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.earshot.support import Env, make_env

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the real sandbox tests run on Linux"
)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed; scripts/test installs it")
    return make_env(tmp_path)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the workspace and outside the temp dir (which commands may write)."""
    path = Path(tempfile.mkdtemp(prefix="earshot-outside-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
