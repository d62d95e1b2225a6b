"""The model catalog: the vendored snapshot, the live layer, user overrides and cost math."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from providers.catalog import (
    ASSUMED_CONTEXT_WINDOW,
    SNAPSHOT_PATH,
    Cost,
    ModelCatalog,
    ModelInfo,
    ModelOverride,
    cost_usd,
    default_data_dir,
    fetch_catalog,
    prune_catalog,
)
from providers.errors import ProviderException
from providers.registry import all_providers
from providers.types import Usage
from tests.loopback import Reply, loopback

SONNET = ("anthropic", "claude-sonnet-4-5")


def info_with(cost: Cost | None) -> ModelInfo:
    return ModelInfo(
        provider="p",
        id="m",
        name="m",
        context_window=None,
        max_output=None,
        vision=False,
        reasoning=False,
        tool_call=True,
        cost=cost,
    )


def test_the_snapshot_is_small_and_covers_the_registry() -> None:
    assert SNAPSHOT_PATH.stat().st_size <= 400_000
    data = json.loads(SNAPSHOT_PATH.read_text(encoding="utf-8"))
    assert data["format"] == 1
    registry_ids = {spec.id for spec in all_providers()}
    assert set(data["providers"]) <= registry_ids
    assert {"anthropic", "openai", "google", "openrouter", "deepseek"} <= set(data["providers"])


def test_the_snapshot_loads() -> None:
    catalog = ModelCatalog.load()
    info = catalog.get(*SONNET)
    assert info == ModelInfo(
        provider="anthropic",
        id="claude-sonnet-4-5",
        name="Claude Sonnet 4.5 (latest)",
        context_window=200_000,
        max_output=64_000,
        vision=True,
        reasoning=True,
        tool_call=True,
        cost=Cost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
    )
    assert len(catalog.models()) > 500
    assert all(model.provider == "openai" for model in catalog.models("openai"))


def test_interleaved_reasoning_fields_survive_pruning() -> None:
    info = ModelCatalog.load().get("deepseek", "deepseek-reasoner")
    assert info is not None
    assert (info.interleaved, info.interleaved_field) == (True, "reasoning_content")


def test_model_ids_with_slashes() -> None:
    info = ModelCatalog.load().get("openrouter", "moonshotai/kimi-k2-thinking")
    assert info is not None and info.in_catalog and info.context_window


def test_non_chat_models_are_pruned() -> None:
    catalog = ModelCatalog.load()
    ids = {model.id for model in catalog.models("openai")} | {
        model.id for model in catalog.models("google")
    }
    assert "gpt-image-1" not in ids  # image output
    assert "text-embedding-3-large" not in ids
    assert "gemini-2.5-flash-preview-tts" not in ids  # audio output
    assert "whisper-large-v3" not in {model.id for model in catalog.models("groq")}


def test_an_unknown_model_of_a_known_provider_is_conservative() -> None:
    catalog = ModelCatalog.load()
    for provider in ("anthropic", "ollama", "llama.cpp"):
        info = catalog.get(provider, "brand-new-model")
        assert info is not None
        assert not info.in_catalog
        assert (info.max_output, info.cost) == (None, None)
        # The meter and compaction need a window: a default, said to be one.
        assert (info.context_window, info.window_assumed) == (ASSUMED_CONTEXT_WINDOW, True)
        assert cost_usd(info, Usage(input_tokens=10)) is None


def test_a_window_a_server_reported_fills_in_for_unknown_ones_only() -> None:
    catalog = ModelCatalog.load(overrides={"vllm/set": ModelOverride(context_window=4096)})
    catalog.learn_windows(
        {"vllm/served": 65536, "vllm/set": 999, "anthropic/claude-sonnet-4-5": 999}
    )
    served = catalog.get("vllm", "served")
    assert served is not None
    assert (served.context_window, served.window_assumed) == (65536, False)
    # The settings and the catalog still win over what a server said.
    configured = catalog.get("vllm", "set")
    assert configured is not None and configured.context_window == 4096
    known = catalog.get(*SONNET)
    assert known is not None and known.context_window != 999 and not known.window_assumed
    other = catalog.get("vllm", "other")
    assert other is not None and other.window_assumed


def test_an_unknown_provider_has_no_models() -> None:
    catalog = ModelCatalog.load()
    assert catalog.get("nope", "x") is None
    assert ModelCatalog.load(known_providers=["nope"]).get("nope", "x") is not None


def test_overrides_win_field_by_field() -> None:
    catalog = ModelCatalog.load(
        overrides={
            "anthropic/claude-sonnet-4-5": ModelOverride(
                context_window=1_000_000, cost=Cost(input=6.0)
            )
        }
    )
    info = catalog.get(*SONNET)
    assert info is not None
    assert info.context_window == 1_000_000
    assert info.max_output == 64_000
    assert info.cost == Cost(input=6.0, output=15.0, cache_read=0.3, cache_write=3.75)


def test_an_override_defines_a_model_nobody_knows() -> None:
    catalog = ModelCatalog.load(
        overrides={
            "local/qwen3-coder": ModelOverride(
                context_window=32768, max_output=8192, vision=False, cost=Cost(input=0, output=0)
            )
        }
    )
    info = catalog.get("local", "qwen3-coder")
    assert info is not None
    assert (info.context_window, info.max_output) == (32768, 8192)
    assert cost_usd(info, Usage(input_tokens=1000, output_tokens=50)) == 0.0
    assert info in catalog.models("local")


def write_live(data_dir: Path, providers: dict[str, object]) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "catalog.json").write_text(
        json.dumps({"format": 1, "source": "test", "providers": providers}), encoding="utf-8"
    )


def test_the_live_layer_sits_between_snapshot_and_overrides(tmp_path: Path) -> None:
    write_live(
        tmp_path,
        {
            "anthropic": {
                "claude-sonnet-4-5": {"name": "Live Sonnet", "context": 500_000, "tool_call": True},
                "claude-next": {"context": 300_000},
            }
        },
    )
    catalog = ModelCatalog.load(
        data_dir=tmp_path,
        overrides={"anthropic/claude-next": ModelOverride(max_output=1000)},
    )
    sonnet = catalog.get(*SONNET)
    assert sonnet is not None and (sonnet.name, sonnet.context_window) == ("Live Sonnet", 500_000)
    following = catalog.get("anthropic", "claude-next")
    assert following is not None
    assert (following.context_window, following.max_output) == (300_000, 1000)
    # Models the refresh does not mention stay as the snapshot has them.
    haiku = catalog.get("anthropic", "claude-3-5-haiku-20241022")
    assert haiku is not None and haiku.in_catalog


def test_a_live_cache_rewritten_while_running_is_read_by_the_next_catalog(tmp_path: Path) -> None:
    """Catalog files are parsed once per process while unchanged (every session loads a
    catalog); a refresh that rewrites the live cache must reach the next session all the same,
    even when the new file has the old one's size."""
    write_live(tmp_path, {"anthropic": {"claude-sonnet-4-5": {"context": 111_111}}})
    first = ModelCatalog.load(data_dir=tmp_path).get(*SONNET)
    again = ModelCatalog.load(data_dir=tmp_path).get(*SONNET)
    assert first is not None and again is not None
    assert first.context_window == again.context_window == 111_111
    replacement = tmp_path / "catalog.json.new"
    replacement.write_text(
        json.dumps(
            {
                "format": 1,
                "source": "test",
                "providers": {"anthropic": {"claude-sonnet-4-5": {"context": 222_222}}},
            }
        ),
        encoding="utf-8",
    )
    replacement.replace(tmp_path / "catalog.json")  # as a refresh writes it: a new file
    later = ModelCatalog.load(data_dir=tmp_path).get(*SONNET)
    assert later is not None and later.context_window == 222_222


def test_a_broken_live_cache_falls_back_to_the_snapshot(tmp_path: Path) -> None:
    (tmp_path / "catalog.json").write_text("{not json", encoding="utf-8")
    info = ModelCatalog.load(data_dir=tmp_path).get(*SONNET)
    assert info is not None and info.context_window == 200_000


def test_no_data_dir_means_no_live_layer(tmp_path: Path) -> None:
    write_live(tmp_path, {"anthropic": {"claude-sonnet-4-5": {"context": 5}}})
    info = ModelCatalog.load().get(*SONNET)
    assert info is not None and info.context_window == 200_000


def test_default_data_dir() -> None:
    assert default_data_dir({"XDG_DATA_HOME": "/x"}) == Path("/x/earshot")
    assert default_data_dir({}).parts[-3:] == (".local", "share", "earshot")


# ------------------------------------------------------------------------------------ cost


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        # 1M fresh input at $3 + 1M output at $15.
        (Usage(input_tokens=1_000_000, output_tokens=1_000_000), 18.0),
        # 1M input of which 800k cached reads ($0.3) and 100k cache writes ($3.75).
        (
            Usage(
                input_tokens=1_000_000,
                cached_input_tokens=800_000,
                cache_write_tokens=100_000,
                output_tokens=0,
            ),
            0.1 * 3.0 + 0.8 * 0.3 + 0.1 * 3.75,
        ),
        # Reasoning is part of output and priced as output.
        (Usage(output_tokens=2000, reasoning_tokens=1500), 2000 * 15.0 / 1e6),
        (Usage(), 0.0),
    ],
)
def test_cost_math(usage: Usage, expected: float) -> None:
    info = info_with(Cost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75))
    assert cost_usd(info, usage) == pytest.approx(expected)


def test_an_unknown_price_is_not_zero() -> None:
    no_cache_write = info_with(Cost(input=1.0, output=2.0, cache_read=0.1))
    assert cost_usd(no_cache_write, Usage(input_tokens=100, cache_write_tokens=10)) is None
    # ...but a price this usage does not need does not matter.
    assert cost_usd(no_cache_write, Usage(input_tokens=100, cached_input_tokens=50)) == (
        pytest.approx((50 * 1.0 + 50 * 0.1) / 1e6)
    )
    assert cost_usd(info_with(Cost(input=1.0)), Usage(input_tokens=1, output_tokens=1)) is None
    assert cost_usd(info_with(None), Usage(input_tokens=1)) is None


def test_real_catalog_cost() -> None:
    info = ModelCatalog.load().get(*SONNET)
    assert info is not None
    usage = Usage(input_tokens=12_000, cached_input_tokens=10_000, output_tokens=500)
    assert cost_usd(info, usage) == pytest.approx((2000 * 3 + 10_000 * 0.3 + 500 * 15) / 1e6)


# ---------------------------------------------------------------------- pruning and refresh


API_SAMPLE: dict[str, Any] = {
    "anthropic": {
        "id": "anthropic",
        "npm": "@ai-sdk/anthropic",
        "models": {
            "claude-x": {
                "id": "claude-x",
                "name": "Claude X",
                "limit": {"context": 200000, "output": 64000},
                "modalities": {"input": ["text", "image", "pdf"], "output": ["text"]},
                "reasoning": True,
                "tool_call": True,
                "cost": {"input": 3, "output": 15, "cache_read": 0.3, "context_over_200k": {}},
                "release_date": "2026-01-01",
            },
            "claude-painter": {
                "id": "claude-painter",
                "modalities": {"input": ["text"], "output": ["image"]},
            },
        },
    },
    "google-vertex": {
        "npm": "@ai-sdk/google-vertex",
        "models": {
            "claude-on-vertex": {
                "id": "claude-on-vertex",
                "modalities": {"input": ["text"], "output": ["text"]},
                "provider": {"npm": "@ai-sdk/google-vertex/anthropic"},
            },
            "gemini-x": {
                "id": "gemini-x",
                "interleaved": {"field": "reasoning_content"},
                "modalities": {"input": ["text"], "output": ["text"]},
            },
        },
    },
    "somebody-else": {"models": {"m": {"id": "m"}}},
}


def test_prune_keeps_only_what_is_read() -> None:
    pruned = prune_catalog(API_SAMPLE, ["anthropic", "google-vertex"])
    assert pruned["providers"] == {
        "anthropic": {
            "claude-x": {
                "name": "Claude X",
                "context": 200000,
                "output": 64000,
                "vision": True,
                "reasoning": True,
                "tool_call": True,
                "cost": {"input": 3, "output": 15, "cache_read": 0.3},
            }
        },
        # Claude served through Vertex speaks another wire: left out.
        "google-vertex": {"gemini-x": {"interleaved": "reasoning_content"}},
    }


def test_the_build_script_writes_a_loadable_catalog(tmp_path: Path) -> None:
    source = tmp_path / "api.json"
    source.write_text(json.dumps(API_SAMPLE), encoding="utf-8")
    output = tmp_path / "catalog.json"
    root = Path(__file__).resolve().parents[2]
    subprocess.run(
        [
            sys.executable,
            str(root / "scripts" / "build_catalog.py"),
            str(source),
            "--output",
            str(output),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    info = ModelCatalog.load(snapshot_path=output).get("anthropic", "claude-x")
    assert info is not None and info.cost == Cost(input=3, output=15, cache_read=0.3)


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_proxy")
def test_fetch_catalog_caches_the_pruned_refresh(tmp_path: Path) -> None:
    with loopback(Reply.json(API_SAMPLE)) as server:
        path = fetch_catalog(tmp_path, url=f"{server.url}/api.json", timeout=10)
    assert path == tmp_path / "catalog.json"
    assert server.requests[0].path == "/api.json"
    catalog = ModelCatalog.load(data_dir=tmp_path)
    info = catalog.get("anthropic", "claude-x")
    assert info is not None and info.name == "Claude X"


@pytest.mark.usefixtures("no_proxy")
def test_fetch_catalog_failure_is_a_provider_error(tmp_path: Path) -> None:
    with (
        loopback(Reply.json({"error": "down"}, status=503)) as server,
        pytest.raises(ProviderException) as caught,
    ):
        fetch_catalog(tmp_path, url=f"{server.url}/api.json", timeout=10)
    assert caught.value.error.kind == "server"
    assert not (tmp_path / "catalog.json").exists()


def test_importing_the_catalog_reads_nothing() -> None:
    code = (
        "import sys\n"
        "opened = []\n"
        "import pathlib\n"
        "orig = pathlib.Path.read_text\n"
        "def spy(self, *args, **kwargs):\n"
        "    opened.append(str(self))\n"
        "    return orig(self, *args, **kwargs)\n"
        "pathlib.Path.read_text = spy\n"
        "from providers.catalog import ModelCatalog\n"
        "catalog = ModelCatalog.load()\n"
        "before = list(opened)\n"
        "catalog.get('anthropic', 'claude-sonnet-4-5')\n"
        "print(len(before), len(opened), 'pydantic' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert result.stdout.split() == ["0", "1", "False"]
