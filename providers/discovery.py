"""The model lists of OpenAI-compatible servers, cached under the data dir.

A local or self-hosted server (Ollama, vLLM, LM Studio, llama.cpp, any OpenAI-compatible host a
user configures) is in no catalog: the models it serves, and their context windows, are what the
server itself says (`providers.wire.server_models` asks). Asking takes a network round trip and
the server may not be running, so it never happens on the way to an answer: front ends read the
cache (`ServerModelCache.read`, a small JSON file per provider) and refresh it in the background
(`fetch_listing` in a worker thread), at most once per `LIST_TTL_SECONDS`.

Cheap to import (json, os, time; named tuples, not dataclasses, which cost milliseconds each to
create): the ACP start-up path reads the cache for the model picker.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from providers.model import ServerModel

if TYPE_CHECKING:
    from providers.model import Endpoint

CACHE_DIR_NAME = "server-models"
LIST_TTL_SECONDS = 600.0
"""How long a fetched list is used before it is asked for again (a model pulled into Ollama
shows up in the picker within ten minutes, or at once with `earshot doctor`)."""
CACHE_FORMAT = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class Listing(NamedTuple):
    """What one provider's server said, and when."""

    provider: str
    base_url: str
    fetched_at: float
    """`time.time()` of the fetch."""
    models: tuple[ServerModel, ...] = ()

    def fresh(self, now: float | None = None, ttl: float = LIST_TTL_SECONDS) -> bool:
        return ((time.time() if now is None else now) - self.fetched_at) < ttl

    def window(self, model_id: str) -> int | None:
        for model in self.models:
            if model.id == model_id:
                return model.context_window
        return None

    def windows(self) -> dict[str, int]:
        """`provider/model` -> window, for the models whose window is known."""
        return {
            f"{self.provider}/{model.id}": model.context_window
            for model in self.models
            if model.context_window
        }


class ServerModelCache:
    """`<data dir>/server-models/<provider>.json`: one listing per provider."""

    def __init__(self, data_dir: Path) -> None:
        self.directory = data_dir / CACHE_DIR_NAME

    def path(self, provider: str) -> Path:
        return self.directory / f"{_UNSAFE.sub('_', provider)}.json"

    def read(self, provider: str, base_url: str) -> Listing | None:
        """The cached listing of `provider`, if it was fetched from `base_url` (a listing of
        another server is not this one's); None when absent or unreadable."""
        try:
            data: object = json.loads(self.path(provider).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        raw = cast("dict[str, Any]", data)
        fetched = raw.get("fetched_at")
        if (
            raw.get("format") != CACHE_FORMAT
            or raw.get("provider") != provider
            or raw.get("base_url") != base_url
            or not isinstance(fetched, int | float)
        ):
            return None
        return Listing(
            provider=provider,
            base_url=base_url,
            fetched_at=float(fetched),
            models=_models_from_json(raw.get("models")),
        )

    def write(self, listing: Listing) -> None:
        """Replace the provider's cached listing atomically (readers see old or new)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.path(listing.provider)
        data = {
            "format": CACHE_FORMAT,
            "provider": listing.provider,
            "base_url": listing.base_url,
            "fetched_at": listing.fetched_at,
            "models": [
                {"id": model.id, "context_window": model.context_window} for model in listing.models
            ],
        }
        # A name of its own per write: sessions of one process (threads) and other processes
        # may refresh the same provider's list at once; the last complete one wins.
        partial = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.partial")
        try:
            partial.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
            partial.replace(target)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise


def _models_from_json(value: object) -> tuple[ServerModel, ...]:
    if not isinstance(value, list):
        return ()
    models: list[ServerModel] = []
    for item in cast("list[object]", value):
        if not isinstance(item, dict):
            continue
        entry = cast("dict[str, Any]", item)
        model_id, window = entry.get("id"), entry.get("context_window")
        if isinstance(model_id, str) and model_id:
            valid = isinstance(window, int) and not isinstance(window, bool) and window > 0
            models.append(ServerModel(id=model_id, context_window=window if valid else None))
    return tuple(models)


def fetch_listing(
    endpoint: Endpoint,
    *,
    windows_for: Sequence[str] = (),
    previous: Listing | None = None,
    timeout: float = 5.0,
) -> Listing:
    """Ask `endpoint`'s server for its models (blocking: run it in a worker thread), and for
    the window of each model in `windows_for` the list does not give (Ollama, LM Studio and
    llama.cpp say it elsewhere). A window the server cannot be asked for now is kept from
    `previous`.

    Raises:
        providers.wire.server_models.ServerModelsError: the server could not be asked.
    """
    # Here, not at the top: asking a server loads urllib.request (~10 ms), and the picker
    # only reads the cache on the way to a session's answer.
    from providers.wire.server_models import context_window, list_models, server_kind

    base_url = endpoint.base_url or ""
    kind = server_kind(endpoint.provider_id, base_url)
    key, headers = endpoint.api_key, endpoint.headers
    listed = list_models(base_url, api_key=key, headers=headers, timeout=timeout)
    models = {model.id: model for model in listed}
    for model_id in windows_for:
        known = models.get(model_id)
        if known is not None and known.context_window:
            continue
        window = context_window(
            kind, base_url, model_id, api_key=key, headers=headers, timeout=timeout
        )
        if window is None and previous is not None:
            window = previous.window(model_id)
        if window is not None:
            models[model_id] = ServerModel(id=model_id, context_window=window)
    return Listing(
        provider=endpoint.provider_id,
        base_url=base_url,
        fetched_at=time.time(),
        models=tuple(models.values()),
    )
