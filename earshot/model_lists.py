"""The models servers report, for the picker and the context window (composition policy).

Which servers are asked (`targets`):
- every OpenAI-compatible server the user configured: a local built-in (Ollama, vLLM, LM Studio,
  llama.cpp) named under `providers` or with its variable set, and every provider the settings
  define. Their models join the model picker (`picker_models`);
- the provider of the session's model, when no catalog layer and no setting knows its window
  (an OpenRouter model newer than the snapshot, say): its list is read for the window only.

The lists are cached under the data dir (`providers.discovery`); reading the cache is all the
`session/new` answer does. `refresh` asks the servers whose list is missing or older than its TTL,
in worker threads, and tells the catalog the windows they reported; the ACP server runs it in the
background after a session opens and refreshes the picker (`config_option_update`) when the list
changed. A server that cannot be asked is asked again only after the TTL, in this process.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from providers.catalog import ModelCatalog
    from providers.discovery import Listing, ServerModelCache
    from providers.model import Endpoint
    from providers.registry import UserProviderConfig

FETCH_TIMEOUT_SECONDS = 5.0
CACHE_DIR_NAME = "server-models"
"""`providers.discovery.CACHE_DIR_NAME`, which this module checks for before importing it."""
_attempted: dict[tuple[str, str], float] = {}
"""(provider, base URL) -> when this process last asked it (success or not)."""


class ProviderSetup(Protocol):
    """What this module reads of `earshot.compose.Composition` (a protocol, so the composition
    can import this module without a cycle)."""

    @property
    def environ(self) -> Mapping[str, str]: ...

    @property
    def user_providers(self) -> Mapping[str, UserProviderConfig]: ...

    @property
    def catalog(self) -> ModelCatalog: ...

    def credentialed(self) -> Sequence[str]: ...


class Target(NamedTuple):
    provider: str
    endpoint: Endpoint
    in_picker: bool
    """Its models are offered in the picker (a server the user runs or configured); False: it
    is asked only for the window of the session's model."""


def _cache(composition: ProviderSetup) -> ServerModelCache:
    from providers.catalog import default_data_dir
    from providers.discovery import ServerModelCache

    return ServerModelCache(default_data_dir(composition.environ))


def picker_targets(composition: ProviderSetup) -> list[Target]:
    """The configured OpenAI-compatible servers whose models the picker offers."""
    from providers.registry import MissingCredentials, provider_spec, resolve_endpoint

    targets: list[Target] = []
    for provider in composition.credentialed():
        spec = provider_spec(provider)
        if spec is not None and not spec.local:
            continue  # a hosted provider: the catalog lists its models
        try:
            endpoint = resolve_endpoint(provider, composition.user_providers, composition.environ)
        except (MissingCredentials, LookupError):
            continue
        if endpoint.api == "openai-chat" and endpoint.base_url:
            targets.append(Target(provider=provider, endpoint=endpoint, in_picker=True))
    return targets


def targets(composition: ProviderSetup, model_name: str | None) -> list[Target]:
    """`picker_targets`, plus the provider of `model_name` when its window is not known."""
    found = picker_targets(composition)
    window_target = _window_target(composition, model_name)
    if window_target is not None and all(t.provider != window_target.provider for t in found):
        found.append(window_target)
    return found


def _window_target(composition: ProviderSetup, model_name: str | None) -> Target | None:
    from providers.registry import MissingCredentials, resolve_endpoint, split_model_name

    if not model_name:
        return None
    try:
        provider, model_id = split_model_name(model_name)
        info = composition.catalog.get(provider, model_id)
        endpoint = resolve_endpoint(provider, composition.user_providers, composition.environ)
    except (ValueError, MissingCredentials, LookupError):
        return None
    if info is None or not info.window_assumed:
        return None
    if endpoint.api != "openai-chat" or not endpoint.base_url:
        return None
    return Target(provider=provider, endpoint=endpoint, in_picker=False)


def cached_listings(composition: ProviderSetup) -> list[tuple[Target, Listing]]:
    """What the cache holds for the picker's servers (no network)."""
    targets = picker_targets(composition)
    if not targets:
        return []
    cache = _cache(composition)
    found: list[tuple[Target, Listing]] = []
    for target in targets:
        listing = cache.read(target.provider, target.endpoint.base_url or "")
        if listing is not None:
            found.append((target, listing))
    return found


def cached_windows(composition: ProviderSetup) -> dict[str, int]:
    """Every window a credentialed OpenAI-compatible server reported, as far as the cache
    knows (`provider/model` -> tokens)."""
    from providers.catalog import default_data_dir
    from providers.registry import MissingCredentials, resolve_endpoint

    if not (default_data_dir(composition.environ) / CACHE_DIR_NAME).is_dir():
        return {}  # nothing was ever asked: the common case, on the `session/new` answer's path
    cache = _cache(composition)
    windows: dict[str, int] = {}
    for provider in composition.credentialed():
        if not cache.path(provider).is_file():
            continue
        try:
            endpoint = resolve_endpoint(provider, composition.user_providers, composition.environ)
        except (MissingCredentials, LookupError):
            continue
        listing = cache.read(provider, endpoint.base_url or "")
        if listing is not None:
            windows.update(listing.windows())
    return windows


async def refresh(composition: ProviderSetup, model_name: str | None) -> bool:
    """Ask the servers whose cached list is missing or stale (and the session model's server,
    for a window nobody knows), update the cache and teach the catalog their windows. True when
    a list the picker shows changed. Never raises for a server that cannot be asked."""
    import anyio.to_thread

    from providers.discovery import LIST_TTL_SECONDS, fetch_listing
    from providers.logs import get_logger
    from providers.registry import split_model_name
    from providers.wire.server_models import ServerModelsError

    log = get_logger(__name__)
    cache = _cache(composition)
    changed = False
    current = split_model_name(model_name) if model_name and "/" in model_name else None
    for target in targets(composition, model_name):
        base_url = target.endpoint.base_url or ""
        previous = cache.read(target.provider, base_url)
        wanted = _wanted_windows(composition, target, current, previous)
        if previous is not None and previous.fresh() and not wanted:
            continue
        key = (target.provider, base_url)
        now = time.time()
        if now - _attempted.get(key, float("-inf")) < LIST_TTL_SECONDS:
            continue
        _attempted[key] = now
        fetch = functools.partial(
            fetch_listing,
            target.endpoint,
            windows_for=wanted,
            previous=previous,
            timeout=FETCH_TIMEOUT_SECONDS,
        )
        try:
            listing = await anyio.to_thread.run_sync(fetch, abandon_on_cancel=True)
        except ServerModelsError as exc:
            log.info("could not list a server's models", provider=target.provider, error=str(exc))
            continue
        try:
            cache.write(listing)
        except OSError as exc:
            log.warning("could not cache a server's models", error=str(exc))
        composition.catalog.learn_windows(listing.windows())
        if target.in_picker and (previous is None or _ids(previous) != _ids(listing)):
            changed = True
    return changed


def _wanted_windows(
    composition: ProviderSetup,
    target: Target,
    current: tuple[str, str] | None,
    previous: Listing | None,
) -> Sequence[str]:
    """The session model's id, when it is this server's and its window is still unknown."""
    if current is None or current[0] != target.provider:
        return ()
    if previous is not None and previous.window(current[1]) is not None:
        return ()
    info = composition.catalog.get(*current)
    return (current[1],) if info is not None and info.window_assumed else ()


def _ids(listing: Listing) -> list[str]:
    return [model.id for model in listing.models]
