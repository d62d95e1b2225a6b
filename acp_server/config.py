"""Session modes and config options (`mode`, `model`, `thought_level`), kept in sync.

Modes are sent both as the legacy `modes` state and as a `mode` config option; clients that build
their pickers from config options (Zed since 1.6.3) see the same values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

# Light imports only: `session/new` is answered with this module before the agent loads.
from agent.modes import MODES, Mode

if TYPE_CHECKING:
    from acp_server.ports import ModelChoice
    from acp_server.protocol.common import (
        SessionConfigOption,
        SessionConfigSelectGroup,
        SessionConfigSelectOption,
    )
    from acp_server.protocol.sessions import LoadSessionResponse, SessionModeState
    from providers.types import ReasoningEffort

    SetupResult: TypeAlias = LoadSessionResponse
    """What `session/new`, `session/load` and `session/resume` answer besides the id."""

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


def modes_state(mode: Mode) -> SessionModeState:
    return {
        "currentModeId": mode,
        "availableModes": [
            {"id": mode_id, "name": name, "description": description}
            for mode_id, (name, description) in MODE_DESCRIPTIONS.items()
        ],
    }


def _model_options(state: ConfigState) -> list[SessionConfigSelectGroup]:
    groups: dict[str, SessionConfigSelectGroup] = {}
    names: set[str] = set()
    for choice in state.models:
        if choice.name in names:
            continue
        names.add(choice.name)
        group = groups.setdefault(
            choice.provider,
            {"group": choice.provider, "name": choice.provider_label, "options": []},
        )
        option: SessionConfigSelectOption = {"value": choice.name, "name": choice.label}
        if choice.assumed_window is not None:
            # Zed draws the context meter from what it is told; the picker is where it says
            # the window is a guess (the meter is not sent for such a model).
            option["name"] = f"{choice.label} ({choice.assumed_window // 1024}k window assumed)"
            option["description"] = (
                f"Context window unknown: {choice.assumed_window:,} tokens assumed. Set "
                f"models.{choice.name}.contextWindow in earshot's settings."
            )
        group["options"].append(option)
    if state.model not in names:
        provider = state.model.split("/", 1)[0]
        group = groups.setdefault(provider, {"group": provider, "name": provider, "options": []})
        group["options"].insert(0, {"value": state.model, "name": state.model})
    return list(groups.values())


def config_options(state: ConfigState) -> list[SessionConfigOption]:
    """The COMPLETE option list, in priority order."""
    mode_values: list[SessionConfigSelectOption] = [
        {"value": mode_id, "name": name, "description": description}
        for mode_id, (name, description) in MODE_DESCRIPTIONS.items()
    ]
    options: list[SessionConfigOption] = [
        {
            "id": "mode",
            "name": "Mode",
            "description": "How much earshot may do without asking",
            "category": "mode",
            "type": "select",
            "currentValue": state.mode,
            "options": mode_values,
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


def setup_result(state: ConfigState) -> SetupResult:
    """The part of a `session/new`, `session/load` and `session/resume` answer after the id."""
    return {"modes": modes_state(state.mode), "configOptions": config_options(state)}
