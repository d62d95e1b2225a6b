"""What a model call is made with: the model, its tools, the system prompt, the limits.

`TurnConfig` is frozen. The session replaces it as a whole when the user switches model or effort,
and the loop reads the current one at each model call: a switch takes effect at the next call,
and no call ever sees half of one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.tools import AnyTool
from agent.turn.retry import RetryPolicy
from providers.types import PromptCache, ReasoningEffort, ToolSpec

if TYPE_CHECKING:
    from providers.catalog import ModelInfo
    from providers.model import Model


class ToolSet(Mapping[str, AnyTool]):
    """The tools a model may call, by name (a later tool with a taken name replaces the earlier
    one). The tools can be given as a loader, with their names: nothing is loaded until a tool
    or the specs are asked for (the first turn), so a session starts without importing them. The
    specs for the request are built when first asked for: the input schemas cost more to build
    than the rest of a session."""

    __slots__ = ("_load", "_names", "_specs", "_tools")

    def __init__(
        self,
        tools: Iterable[AnyTool] = (),
        *,
        names: Sequence[str] | None = None,
        load: Callable[[], Iterable[AnyTool]] | None = None,
    ) -> None:
        self._tools: dict[str, AnyTool] | None = None
        self._load = load
        self._names = tuple(dict.fromkeys(names)) if names is not None else None
        self._specs: tuple[ToolSpec, ...] | None = None
        if load is None:
            self._take(tools)

    def _take(self, tools: Iterable[AnyTool]) -> dict[str, AnyTool]:
        taken: dict[str, AnyTool] = {}
        for tool in tools:
            taken[tool.name] = tool
        self._tools = taken
        self._names = tuple(taken)
        return taken

    def _loaded(self) -> dict[str, AnyTool]:
        if self._tools is not None:
            return self._tools
        assert self._load is not None
        loaded = self._take(self._load())
        self._load = None
        return loaded

    def __getitem__(self, name: str) -> AnyTool:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names if self._names is not None else self._loaded())

    def __len__(self) -> int:
        return len(self._names if self._names is not None else self._loaded())

    def __contains__(self, name: object) -> bool:
        return name in (self._names if self._names is not None else self._loaded())

    @property
    def specs(self) -> Sequence[ToolSpec]:
        if self._specs is None:
            self._specs = tuple(_spec(tool) for tool in self._loaded().values())
        return self._specs

    def extended(self, tools: Iterable[AnyTool]) -> ToolSet:
        """This set with `tools` appended at the end, in order (a name already here keeps its
        tool): the specs built so far are kept as the new specs' beginning, so what the model
        saw before stays a prefix of what it sees now. Nothing is loaded that was not."""
        fresh = list({tool.name: tool for tool in tools if tool.name not in self}.values())
        if not fresh:
            return self
        if self._tools is None:
            load = self._load
            assert load is not None
            return ToolSet(
                names=[*self, *(tool.name for tool in fresh)], load=lambda: [*load(), *fresh]
            )
        joined = ToolSet([*self._tools.values(), *fresh])
        if self._specs is not None:
            joined._specs = (*self._specs, *(_spec(tool) for tool in fresh))
        return joined

    def only(self, names: Iterable[str]) -> ToolSet:
        """The tools named (each must be in this set)."""
        loaded = self._loaded()
        return ToolSet(loaded[name] for name in names)


def _spec(tool: AnyTool) -> ToolSpec:
    return ToolSpec(name=tool.name, description=tool.description, input_schema=tool.input_schema)


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
    cache: PromptCache | None = None
    """The prompt-cache hints every request carries (the `cache` setting; None: `off`)."""
