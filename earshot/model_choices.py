"""The models a session can switch to: the model picker (ACP's `model` option) and `/model` with
no argument list the same ones, in the same order.

Credentialed providers' catalog models that can call tools, then the models the configured
servers reported (`earshot.model_lists`, cached), then the settings' `model` and `models` keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

from earshot.model_lists import ProviderSetup, cached_listings

if TYPE_CHECKING:
    from agent.settings import Settings


class ChoiceSource(ProviderSetup, Protocol):
    """What this module reads of `earshot.compose.Composition`."""

    @property
    def settings(self) -> Settings: ...

    def disabled_providers(self) -> frozenset[str]: ...


class ModelEntry(NamedTuple):
    name: str
    """`provider/model`."""
    label: str
    provider: str
    provider_label: str


def model_entries(composition: ChoiceSource) -> list[ModelEntry]:
    from providers.registry import provider_spec, split_model_name

    settings = composition.settings

    def label_of(provider: str) -> str:
        spec = provider_spec(provider)
        return spec.name if spec is not None else provider

    disabled = composition.disabled_providers()
    entries: list[ModelEntry] = []
    for provider in composition.credentialed():
        for info in composition.catalog.models(provider):
            if info.tool_call:
                entries.append(
                    ModelEntry(f"{provider}/{info.id}", info.name, provider, label_of(provider))
                )
    for target, listing in cached_listings(composition):
        for model in listing.models:
            provider = target.provider
            entries.append(
                ModelEntry(f"{provider}/{model.id}", model.id, provider, label_of(provider))
            )
    for name in (settings.model, *settings.models):
        if not name:
            continue
        try:
            provider, model_id = split_model_name(name)
        except ValueError:
            continue
        override = settings.models.get(name)
        label = override.name if override and override.name else model_id
        entries.append(ModelEntry(name, label, provider, label_of(provider)))
    return [entry for entry in entries if entry.provider not in disabled]


def model_names(composition: ChoiceSource) -> list[str]:
    """The entries' names, each once."""
    return list(dict.fromkeys(entry.name for entry in model_entries(composition)))


__all__ = ["ChoiceSource", "ModelEntry", "model_entries", "model_names"]
