"""Every test's earshot data dir is a temporary one: commands the tests run in the sandbox keep
its lock there (`agent.sandbox_linux.Placeholders`), and nothing may land in the real home."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _temporary_data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
        yield
