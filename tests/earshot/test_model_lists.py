"""Which servers earshot asks for their models (`earshot.model_lists`)."""

from __future__ import annotations

from pathlib import Path

from earshot.compose import Composition
from earshot.model_lists import CACHE_DIR_NAME, picker_targets, targets
from providers.discovery import CACHE_DIR_NAME as DISCOVERY_CACHE_DIR
from tests.earshot.support import Env, make_env


def composition(env: Env, **environ: str) -> Composition:
    return Composition.load(env.workspace, environ=env.environ(**environ))


def test_the_cache_is_looked_for_where_it_is_written() -> None:
    assert CACHE_DIR_NAME == DISCOVERY_CACHE_DIR


def test_configured_local_and_user_defined_servers_feed_the_picker(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.write_settings(
        {
            "model": "anthropic/claude-sonnet-4-5",
            "providers": {
                "ollama": {"baseUrl": "http://127.0.0.1:11434/v1"},
                "box": {"api": "openai-chat", "baseUrl": "http://10.0.0.5:8000/v1"},
                "claude-proxy": {"api": "anthropic", "baseUrl": "http://10.0.0.6/"},
            },
        }
    )
    found = picker_targets(composition(env, ANTHROPIC_API_KEY="k", GROQ_API_KEY="k"))
    # Hosted providers (the catalog lists them) and non-OpenAI APIs are not asked.
    assert [(t.provider, t.in_picker) for t in found] == [("ollama", True), ("box", True)]
    # vLLM is not configured (no settings entry, no variable): nothing says it runs.
    assert "vllm" not in [t.provider for t in found]


def test_a_model_no_catalog_knows_has_its_servers_list_read_for_its_window(
    tmp_path: Path,
) -> None:
    env = make_env(tmp_path)
    env.write_settings({"model": "openrouter/brand-new/model-x"})
    both = composition(env, OPENROUTER_API_KEY="k")
    assert [(t.provider, t.in_picker) for t in targets(both, "openrouter/brand-new/model-x")] == [
        ("openrouter", False)
    ]
    # A model the catalog knows needs nothing from the server.
    assert targets(both, "openrouter/anthropic/claude-sonnet-4.5") == []
