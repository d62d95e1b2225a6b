"""What a model call is made with: the model, its tools, the system prompt, the limits.

`TurnConfig` is frozen. The session replaces it as a whole when the user switches model or effort,
and the loop reads the current one at each model call: a switch takes effect at the next call,
and no call ever sees half of one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.retry import RetryPolicy
from agent.tools.base import AnyTool
from providers.types import ReasoningEffort, ToolSpec

if TYPE_CHECKING:
    from providers.catalog import ModelInfo
    from providers.model import Model


class ToolSet(Mapping[str, AnyTool]):
    """The tools a model may call, by name (a later tool with a taken name replaces the earlier
    one), and their specs for the request, built when first asked for: the input schemas cost
    more to build than the rest of a session."""

    __slots__ = ("_specs", "_tools")

    def __init__(self, tools: Iterable[AnyTool]) -> None:
        self._tools: dict[str, AnyTool] = {}
        for tool in tools:
            self._tools[tool.name] = tool
        self._specs: tuple[ToolSpec, ...] | None = None

    def __getitem__(self, name: str) -> AnyTool:
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def specs(self) -> Sequence[ToolSpec]:
        if self._specs is None:
            self._specs = tuple(
                ToolSpec(name=t.name, description=t.description, input_schema=t.input_schema)
                for t in self._tools.values()
            )
        return self._specs

    def only(self, names: Iterable[str]) -> ToolSet:
        """The tools named (each must be in this set)."""
        return ToolSet(self._tools[name] for name in names)


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnConfig:
    model: Model
    model_info: ModelInfo | None
    """What the catalog knows of `model` (window, prices, vision); None when nothing."""
    reasoning_effort: ReasoningEffort | None
    system_prompt: str
    tools: ToolSet
    max_turns: int
    """Model calls per turn."""
    retry: RetryPolicy
