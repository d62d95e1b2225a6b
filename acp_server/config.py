"""Session modes and config options (`mode`, `model`, `thought_level`), kept in sync.

Modes are sent both as the legacy `modes` state and as a `mode` config option; clients that build
their pickers from config options (Zed since 1.6.3) see the same values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

# Light imports only: the start-up path answers the first `session/new` with this module
# (`acp_server.early_session`) before the event loop and the agent load.
from acp_server.wire import JsonObject
from agent.modes import MODES, Mode

if TYPE_CHECKING:
    from acp_server.factory import ModelChoice
    from providers.types import ReasoningEffort

MODE_DESCRIPTIONS: dict[Mode, tuple[str, str]] = {
    "plan": ("Plan", "Read and plan only: every change is refused"),
    "ask": ("Ask", "Ask before every change and command"),
    "accept-edits": (
        "Accept edits",
        "Edit files in the workspace without asking; ask for commands",
    ),
    "auto": ("Auto", "Run what the rules allow; ask only where a rule says so"),
    "yolo": ("YOLO", "Never ask (deny rules still apply)"),
}

THOUGHT_LEVELS: tuple[tuple[str, str], ...] = (
    ("default", "Model default"),
    ("minimal", "Minimal"),
    ("low", "Low"),
    ("medium", "Medium"),
    ("high", "High"),
)
EFFORTS: tuple[ReasoningEffort, ...] = ("minimal", "low", "medium", "high")


def parse_mode(value: object) -> Mode | None:
    return value if value in MODES else None


def parse_effort(value: object) -> tuple[bool, ReasoningEffort | None]:
    """(valid, effort): `default` means the model's own default (None)."""
    if value == "default":
        return True, None
    if value in EFFORTS:
        return True, value
    return False, None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigState:
    """Everything the pickers show for one session."""

    mode: Mode
    model: str
    effort: ReasoningEffort | None
    reasoning: bool
    """Whether the current model reasons (the thought level picker is offered only then)."""
    models: Sequence[ModelChoice]


def modes_state(mode: Mode) -> JsonObject:
    return {
        "currentModeId": mode,
        "availableModes": [
            {"id": mode_id, "name": name, "description": description}
            for mode_id, (name, description) in MODE_DESCRIPTIONS.items()
        ],
    }


def _model_options(state: ConfigState) -> list[JsonObject]:
    groups: dict[str, JsonObject] = {}
    names: set[str] = set()
    for choice in state.models:
        if choice.name in names:
            continue
        names.add(choice.name)
        group = groups.setdefault(
            choice.provider,
            {"group": choice.provider, "name": choice.provider_label, "options": []},
        )
        cast("list[JsonObject]", group["options"]).append(
            {"value": choice.name, "name": choice.label}
        )
    if state.model not in names:
        provider = state.model.split("/", 1)[0]
        group = groups.setdefault(provider, {"group": provider, "name": provider, "options": []})
        cast("list[JsonObject]", group["options"]).insert(
            0, {"value": state.model, "name": state.model}
        )
    return list(groups.values())


def config_options(state: ConfigState) -> list[JsonObject]:
    """The COMPLETE option list, in priority order."""
    options: list[JsonObject] = [
        {
            "id": "mode",
            "name": "Mode",
            "description": "How much earshot may do without asking",
            "category": "mode",
            "type": "select",
            "currentValue": state.mode,
            "options": [
                {"value": mode_id, "name": name, "description": description}
                for mode_id, (name, description) in MODE_DESCRIPTIONS.items()
            ],
        },
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": state.model,
            "options": _model_options(state),
        },
    ]
    if state.reasoning:
        options.append(
            {
                "id": "thought_level",
                "name": "Thinking",
                "description": "How hard the model reasons before answering",
                "category": "thought_level",
                "type": "select",
                "currentValue": state.effort or "default",
                "options": [{"value": value, "name": name} for value, name in THOUGHT_LEVELS],
            }
        )
    return options


def setup_result(state: ConfigState) -> JsonObject:
    """The part of a `session/new`, `session/load` and `session/resume` answer after the id."""
    return {"modes": modes_state(state.mode), "configOptions": config_options(state)}
