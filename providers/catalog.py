"""What earshot knows about each model: context window, output cap, capabilities and prices.

Three layers, later ones winning: the models.dev snapshot vendored in `providers/data/catalog.json`
(pruned by `scripts/build_catalog.py`), an opt-in live refresh cached in the data dir (written only
by `fetch_catalog`, which nothing calls at start-up), and the user's `models.<provider/model>`
overrides from settings. A model nobody has heard of is a settings entry, not a release: an unknown
model of a known provider gets a conservative `ModelInfo` (no price) instead of an error.

Every model `get` returns has a context window, because the context meter and compaction need
one: the catalog's or the settings', else the one its server reported (`learn_windows`: vLLM,
Ollama, LM Studio, llama.cpp and OpenRouter say, see `providers.wire.server_models`), else
`ASSUMED_CONTEXT_WINDOW`, flagged `window_assumed` so front ends say it is a guess.

Everything is loaded lazily with `json`; importing this module reads no file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from providers.records import Record
from providers.registry import all_providers, provider_spec

if TYPE_CHECKING:
    from providers.types import Usage

SNAPSHOT_PATH: Final = Path(__file__).resolve().parent / "data" / "catalog.json"
MODELS_DEV_URL: Final = "https://models.dev/api.json"
CATALOG_FORMAT: Final = 1
LIVE_FILE_NAME: Final = "catalog.json"

_PER_MILLION: Final = 1_000_000
LONG_CACHE_WRITE_FACTOR: Final = 2.0
"""An hour-long cache write costs this many times the input price (Anthropic's pricing: 5-minute
writes cost 1.25 times, which is the catalog's `cache_write`)."""
_Layer = dict[str, dict[str, dict[str, Any]]]
"""One catalog file's models: provider id -> model id -> the fields `ModelInfo` reads."""
ASSUMED_CONTEXT_WINDOW: Final = 32_768
"""Tokens assumed for a model whose window no catalog layer, no setting and no server gave. A
middle guess: short enough that compaction starts before most servers overflow (an overflow is
recovered from anyway), long enough for typical work. `models.<provider/model>.contextWindow`
in settings replaces it."""


class Cost(Record):
    """USD per million tokens. None means unknown, which is not the same as free."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None


class ModelInfo(Record):
    """Facts about one model of one provider."""

    provider: str
    id: str
    name: str
    context_window: int | None
    """Tokens; None when unknown (context shaping then cannot compact by percentage)."""
    max_output: int | None
    vision: bool
    """Accepts image input."""
    reasoning: bool
    tool_call: bool
    cost: Cost | None
    interleaved: bool = False
    """Reasoning must be echoed back in history on tool-call turns."""
    interleaved_field: str | None = None
    """Which chat field carries it back (`reasoning_content`, `reasoning_details`), if named."""
    in_catalog: bool = True
    """False for the conservative stand-in returned for a model no layer knows."""
    window_assumed: bool = False
    """`context_window` is `ASSUMED_CONTEXT_WINDOW`: nothing said what it really is."""


class ModelOverride(Record):
    """A user's `models.<provider/model>` settings entry: every field set replaces the catalog's;
    cost fields are replaced one by one."""

    name: str | None = None
    context_window: int | None = None
    max_output: int | None = None
    vision: bool | None = None
    reasoning: bool | None = None
    tool_call: bool | None = None
    cost: Cost | None = None


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_DATA_HOME/earshot`, defaulting to `~/.local/share/earshot`."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "earshot"


class ModelCatalog:
    """The merged catalog. Build it with `ModelCatalog.load`."""

    def __init__(
        self,
        *,
        overrides: Mapping[str, ModelOverride],
        live_path: Path | None,
        snapshot_path: Path,
        known_providers: Iterable[str],
    ) -> None:
        self._overrides = dict(overrides)
        self._live_path = live_path
        self._snapshot_path = snapshot_path
        self._extra_providers = set(known_providers)
        self._layers: list[_Layer] | None = None
        self._server_windows: dict[str, int] = {}
        """`provider/model` -> the window its server reported (`learn_windows`)."""
        self._built: dict[str, dict[str, ModelInfo] | None] = {}
        """Provider -> its models, built at the first question about that provider (building
        all ~1,000 entries costs ~12 ms, and the first `session/new` asks about a few
        providers); None: the catalog has no such provider."""

    @classmethod
    def load(
        cls,
        *,
        overrides: Mapping[str, ModelOverride] | None = None,
        data_dir: Path | None = None,
        snapshot_path: Path | None = None,
        known_providers: Iterable[str] = (),
    ) -> ModelCatalog:
        """Prepare the catalog; files are read on first use.

        Args:
            overrides: `models.<provider/model>` settings, keyed by `provider/model`.
            data_dir: where a live refresh was cached (`default_data_dir()` in the CLI); None
                skips the live layer.
            snapshot_path: the vendored snapshot (tests may point elsewhere).
            known_providers: provider ids beyond the built-ins (the user's own providers), whose
                unknown models should still get a conservative entry.
        """
        return cls(
            overrides=overrides or {},
            live_path=data_dir / LIVE_FILE_NAME if data_dir is not None else None,
            snapshot_path=snapshot_path or SNAPSHOT_PATH,
            known_providers=known_providers,
        )

    def get(self, provider: str, model: str) -> ModelInfo | None:
        """The model's facts; a conservative stand-in for an unknown model of a known provider;
        None when the provider itself is unknown. The window is never None (see the module
        docstring)."""
        by_id = self._provider(provider)
        info = by_id.get(model) if by_id is not None else None
        if info is None and (by_id is not None or self._is_known_provider(provider)):
            info = _unknown(provider, model)
        if info is None or info.context_window is not None:
            return info
        window = self._server_windows.get(f"{provider}/{model}")
        if window is not None:
            return replace(info, context_window=window)
        return replace(info, context_window=ASSUMED_CONTEXT_WINDOW, window_assumed=True)

    def learn_windows(self, windows: Mapping[str, int]) -> None:
        """Windows servers reported (`provider/model` -> tokens), for models no layer or setting
        gives one; later calls add to and replace earlier ones."""
        self._server_windows.update({name: size for name, size in windows.items() if size > 0})

    def models(self, provider: str | None = None) -> list[ModelInfo]:
        """Every known model (of one provider, if given), in catalog order."""
        if provider is not None:
            return list((self._provider(provider) or {}).values())
        return [
            info
            for provider_id in self._provider_ids()
            for info in (self._provider(provider_id) or {}).values()
        ]

    def _is_known_provider(self, provider: str) -> bool:
        return provider in self._extra_providers or provider_spec(provider) is not None

    def _read_layers(self) -> list[_Layer]:
        if self._layers is None:
            layers = [_read_pruned(self._snapshot_path, required=True)]
            if self._live_path is not None:
                # A broken cache must not stop earshot starting: the snapshot still stands.
                layers.append(_read_pruned(self._live_path, required=False))
            self._layers = layers
        return self._layers

    def _provider_ids(self) -> list[str]:
        """Every provider with models: the snapshot's, the live cache's, the overrides'."""
        ids = [provider for layer in self._read_layers() for provider in layer]
        ids.extend(name.partition("/")[0] for name in self._overrides)
        return list(dict.fromkeys(provider for provider in ids if provider))

    def _provider(self, provider: str) -> dict[str, ModelInfo] | None:
        if provider not in self._built:
            self._built[provider] = self._build(provider)
        return self._built[provider]

    def _build(self, provider: str) -> dict[str, ModelInfo] | None:
        by_id: dict[str, ModelInfo] | None = None
        for layer in self._read_layers():
            entries = layer.get(provider)
            if entries is None:
                continue
            by_id = by_id if by_id is not None else {}
            for model_id, entry in entries.items():
                by_id[model_id] = _info_from_entry(provider, model_id, entry)
        for name, override in self._overrides.items():
            override_provider, slash, model_id = name.partition("/")
            if not slash or override_provider != provider or not model_id:
                continue
            by_id = by_id if by_id is not None else {}
            base = by_id.get(model_id) or replace(_unknown(provider, model_id), in_catalog=True)
            by_id[model_id] = _apply_override(base, override)
        return by_id


def cost_usd(info: ModelInfo, usage: Usage) -> float | None:
    """What one call cost in USD: cached input at the cache-read price, cache writes at the
    cache-write price (the catalog's is the 5-minute one; an hour-long write costs twice the
    input price, Anthropic's rule and the only vendor that reports them), the rest of the input
    at the input price. None when a price that this usage needs is unknown; unknown is not
    zero."""
    cost = info.cost
    if cost is None:
        return None
    cached = usage.cached_input_tokens
    written = usage.cache_write_tokens
    written_1h = min(usage.cache_write_1h_tokens, written)
    fresh = max(0, usage.input_tokens - cached - written)
    total = 0.0
    for tokens, price in (
        (fresh, cost.input),
        (cached, cost.cache_read),
        (written - written_1h, cost.cache_write),
        (written_1h, None if cost.input is None else cost.input * LONG_CACHE_WRITE_FACTOR),
        (usage.output_tokens, cost.output),
    ):
        if tokens == 0:
            continue
        if price is None:
            return None
        total += tokens * price
    return total / _PER_MILLION


def _unknown(provider: str, model: str) -> ModelInfo:
    # Tools assumed: a coding agent needs them, and a model without them fails loudly anyway.
    return ModelInfo(
        provider=provider,
        id=model,
        name=model,
        context_window=None,
        max_output=None,
        vision=False,
        reasoning=False,
        tool_call=True,
        cost=None,
        in_catalog=False,
    )


def _apply_override(base: ModelInfo, override: ModelOverride) -> ModelInfo:
    cost = base.cost
    if override.cost is not None:
        old = cost or Cost()
        new = override.cost
        cost = Cost(
            input=new.input if new.input is not None else old.input,
            output=new.output if new.output is not None else old.output,
            cache_read=new.cache_read if new.cache_read is not None else old.cache_read,
            cache_write=new.cache_write if new.cache_write is not None else old.cache_write,
        )
    return replace(
        base,
        name=override.name if override.name is not None else base.name,
        context_window=(
            override.context_window if override.context_window is not None else base.context_window
        ),
        max_output=override.max_output if override.max_output is not None else base.max_output,
        vision=override.vision if override.vision is not None else base.vision,
        reasoning=override.reasoning if override.reasoning is not None else base.reasoning,
        tool_call=override.tool_call if override.tool_call is not None else base.tool_call,
        cost=cost,
    )


# ------------------------------------------------------------------------- the pruned format
#
# {"format": 1, "source": "...", "providers": {provider: {model_id: entry}}}, where an entry is
# {"name", "context"?, "output"?, "vision"?, "reasoning"?, "tool_call"?, "interleaved"?,
#  "cost"?: {"input"?, "output"?, "cache_read"?, "cache_write"?}}; absent booleans are false.


_parsed: dict[Path, tuple[tuple[int, int, int], _Layer]] = {}
"""Catalog files as last parsed, keyed by path, with the (inode, mtime, size) they had: every
session loads a catalog, and the 156 kB snapshot would otherwise be parsed again each time. A
file rewritten since (`earshot models --refresh`) is parsed again. Readers never mutate a layer."""


def _read_pruned(path: Path, *, required: bool) -> _Layer:
    try:
        status = path.stat()
    except OSError:
        return _parse_layer(path, required=required)
    key = (status.st_ino, status.st_mtime_ns, status.st_size)
    cached = _parsed.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    layer = _parse_layer(path, required=required)
    _parsed[path] = (key, layer)
    return layer


def _parse_layer(path: Path, *, required: bool) -> _Layer:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or cast("dict[str, Any]", data).get("format") != 1:
            raise ValueError(f"{path} is not an earshot catalog (format {CATALOG_FORMAT})")
        providers = cast("_Layer", data["providers"])
    except (OSError, ValueError, KeyError):
        if required:
            raise
        return {}
    return providers


def _optional_number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _info_from_entry(provider: str, model_id: str, entry: Mapping[str, Any]) -> ModelInfo:
    raw_cost = entry.get("cost")
    cost: Cost | None = None
    if isinstance(raw_cost, dict):
        prices = cast("dict[str, object]", raw_cost)
        cost = Cost(
            input=_optional_number(prices.get("input")),
            output=_optional_number(prices.get("output")),
            cache_read=_optional_number(prices.get("cache_read")),
            cache_write=_optional_number(prices.get("cache_write")),
        )
    interleaved = entry.get("interleaved")
    context = entry.get("context")
    output = entry.get("output")
    return ModelInfo(
        provider=provider,
        id=model_id,
        name=str(entry.get("name") or model_id),
        context_window=context if isinstance(context, int) and context > 0 else None,
        max_output=output if isinstance(output, int) and output > 0 else None,
        vision=bool(entry.get("vision", False)),
        reasoning=bool(entry.get("reasoning", False)),
        tool_call=bool(entry.get("tool_call", False)),
        cost=cost,
        interleaved=bool(interleaved),
        interleaved_field=interleaved if isinstance(interleaved, str) else None,
    )


def prune_catalog(api: Mapping[str, Any], provider_ids: Iterable[str]) -> dict[str, Any]:
    """Reduce models.dev's `api.json` to what earshot reads: the given providers, text-output chat
    models only, and only the fields `ModelInfo` carries."""
    providers: _Layer = {}
    for provider_id in provider_ids:
        provider = api.get(provider_id)
        if not isinstance(provider, dict):
            continue
        provider_data = cast("dict[str, Any]", provider)
        entries: dict[str, dict[str, Any]] = {}
        models = cast("dict[str, dict[str, Any]]", provider_data.get("models") or {})
        for model_id, model in models.items():
            if _is_chat_model(model_id, model, provider_data):
                entries[model_id] = _prune_model(model_id, model)
        if entries:
            providers[provider_id] = entries
    return {"format": CATALOG_FORMAT, "source": "models.dev api.json", "providers": providers}


def _is_chat_model(model_id: str, model: Mapping[str, Any], provider: Mapping[str, Any]) -> bool:
    modalities = cast("dict[str, list[str]]", model.get("modalities") or {})
    if "text" not in modalities.get("output", ["text"]):
        return False
    if "text" not in modalities.get("input", ["text"]):
        return False
    if "embed" in model_id.lower():
        return False
    # A model served through another vendor's API at another URL (Claude on Vertex or Azure)
    # would be sent to the wrong wire adapter; leave it to an explicit settings entry.
    override = model.get("provider")
    if isinstance(override, dict):
        override_data = cast("dict[str, Any]", override)
        if "api" in override_data or override_data.get("npm", provider.get("npm")) != provider.get(
            "npm"
        ):
            return False
    return True


def _prune_model(model_id: str, model: Mapping[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    name = model.get("name")
    if isinstance(name, str) and name != model_id:
        entry["name"] = name
    limit = cast("dict[str, Any]", model.get("limit") or {})
    if isinstance(limit.get("context"), int) and limit["context"] > 0:
        entry["context"] = limit["context"]
    if isinstance(limit.get("output"), int) and limit["output"] > 0:
        entry["output"] = limit["output"]
    modalities = cast("dict[str, list[str]]", model.get("modalities") or {})
    if "image" in modalities.get("input", []):
        entry["vision"] = True
    for flag in ("reasoning", "tool_call"):
        if model.get(flag) is True:
            entry[flag] = True
    interleaved = model.get("interleaved")
    if isinstance(interleaved, dict):
        field_name = cast("dict[str, Any]", interleaved).get("field")
        entry["interleaved"] = field_name if isinstance(field_name, str) else True
    elif interleaved is True:
        entry["interleaved"] = True
    raw_cost = model.get("cost")
    if isinstance(raw_cost, dict):
        prices = cast("dict[str, Any]", raw_cost)
        cost = {
            key: prices[key]
            for key in ("input", "output", "cache_read", "cache_write")
            if _optional_number(prices.get(key)) is not None
        }
        if cost:
            entry["cost"] = cost
    return entry


def fetch_catalog(data_dir: Path, *, url: str = MODELS_DEV_URL, timeout: float = 30.0) -> Path:
    """Download models.dev's catalog, prune it and cache it as the live layer. Opt-in: nothing
    calls this at start-up.

    Raises:
        ProviderException: the download failed or was not a catalog (the message names the URL).
    """
    # Here, not at the top: only `earshot models refresh` downloads (urllib.request alone costs
    # ~10 ms on the way to a session's answer).
    import urllib.error
    import urllib.request

    from providers.errors import ProviderException, classify

    status: int | None = None
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            status = cast("int", response.status)
            api = json.loads(response.read())
    except urllib.error.HTTPError as error:
        error.close()
        raise ProviderException(
            classify(provider="models.dev", status=error.code, message=f"{url}: {error.reason}")
        ) from error
    except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
        raise ProviderException(
            classify(provider="models.dev", status=None, message=f"{url}: {error}", network=True)
        ) from error
    except ValueError as error:
        raise ProviderException(
            classify(provider="models.dev", status=status, message=f"{url}: not JSON ({error})")
        ) from error
    if not isinstance(api, dict):
        raise ProviderException(
            classify(provider="models.dev", status=status, message=f"{url}: not a catalog object")
        )
    pruned = prune_catalog(cast("dict[str, Any]", api), (spec.id for spec in all_providers()))
    pruned["source"] = url
    data_dir.mkdir(parents=True, exist_ok=True)
    target = data_dir / LIVE_FILE_NAME
    # A name of its own: two `earshot models --refresh` at once must not share one
    partial = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.partial")
    try:
        partial.write_text(json.dumps(pruned, separators=(",", ":")), encoding="utf-8")
        partial.replace(target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return target
