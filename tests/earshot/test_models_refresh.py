"""`earshot models --refresh`: the opt-in live catalog download, against the loopback server
(a subprocess, with EARSHOT_CATALOG_URL pointing at it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.earshot.support import Env, earshot, make_env
from tests.loopback import Reply, loopback

API: dict[str, Any] = {
    "anthropic": {
        "id": "anthropic",
        "models": {
            "claude-refreshed": {
                "id": "claude-refreshed",
                "name": "Claude Refreshed",
                "limit": {"context": 200000, "output": 64000},
                "modalities": {"input": ["text"], "output": ["text"]},
                "tool_call": True,
            },
            "claude-painter": {
                "id": "claude-painter",
                "modalities": {"input": ["text"], "output": ["image"]},
            },
        },
    },
    "openai": {
        "id": "openai",
        "models": {
            "gpt-refreshed": {
                "id": "gpt-refreshed",
                "name": "GPT Refreshed",
                "modalities": {"input": ["text"], "output": ["text"]},
                "tool_call": True,
            }
        },
    },
}


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


async def test_refresh_caches_the_catalog_and_reports_the_count(env: Env) -> None:
    with loopback(Reply.json(API)) as server:
        url = f"{server.url}/api.json"
        run = await earshot(
            env,
            "models",
            "--refresh",
            "--provider",
            "anthropic",
            extra_env={"EARSHOT_CATALOG_URL": url},
        )
    assert run.code == 0, run.stderr
    cache = env.data_home / "earshot" / "catalog.json"
    # Two chat models (the image-output one is pruned), from the loopback server only.
    assert f"catalog refreshed from {url}: 2 models of 2 providers in {cache}" in run.stdout
    assert [request.path for request in server.requests] == ["/api.json"]
    assert set(json.loads(cache.read_text())["providers"]) == {"anthropic", "openai"}
    # The listing that follows already reads the refreshed layer.
    assert "anthropic/claude-refreshed" in run.stdout


async def test_a_failed_refresh_is_exit_1_and_keeps_no_cache(env: Env) -> None:
    with loopback(Reply.json({"error": "down"}, status=503)) as server:
        run = await earshot(
            env, "models", "--refresh", extra_env={"EARSHOT_CATALOG_URL": f"{server.url}/x"}
        )
    assert run.code == 1
    assert "catalog refresh failed" in run.stderr
    assert not (env.data_home / "earshot" / "catalog.json").exists()
