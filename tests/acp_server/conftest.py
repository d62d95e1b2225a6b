from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp_server.client import AgentEnv, make_env


@pytest.fixture
def agent_env(tmp_path: Path) -> AgentEnv:
    return make_env(tmp_path)
