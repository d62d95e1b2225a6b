"""Pieces shared by the context, compaction and usage tests: a catalog with a small window, a
tool with large outputs, and a scripted model that answers summary requests."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from agent.backends import ToolUi
from agent.compaction import is_summary_request
from agent.tokens import TokenCounter, request_overhead
from agent.tools.base import AnyTool, ToolContext, ToolOutput, define_tool
from providers.catalog import Cost, ModelCatalog, ModelOverride
from providers.errors import classify
from providers.types import ModelRequest, ProviderError, Usage
from providers.wire.scripted import ScriptedCall, ScriptedTurn, TurnSpec

SUMMARY = "SUMMARY: the user asked for a series of file dumps; all were done."


def catalog(window: int | None, *, cost: Cost | None = None) -> ModelCatalog:
    """A catalog whose `scripted/scripted` model has `window` tokens (None: unknown)."""
    override = ModelOverride(context_window=window, cost=cost)
    return ModelCatalog.load(overrides={"scripted/scripted": override})


def request_tokens(request: ModelRequest) -> int:
    """The estimated size of a request as sent."""
    return TokenCounter().messages(request.messages) + request_overhead(
        request.system, request.tools
    )


class DumpInput(BaseModel):
    path: str
    size: int = 12_000


async def _dump(args: DumpInput, ctx: ToolContext) -> ToolOutput:
    line = f"{args.path}: lorem ipsum dolor sit amet\n"
    return ToolOutput.text((line * (args.size // len(line) + 1))[: args.size])


dump_tool: AnyTool = define_tool(
    name="read",
    description="returns a large file",
    input_model=DumpInput,
    execute=_dump,
    ui=lambda args, ctx: ToolUi(title=f"read {args.path}"),
    read_only=True,
)


def overflow_error(size: int, window: int) -> ProviderError:
    """SYNTHETIC: Anthropic's overflow text (providers.md section 8), classified."""
    return classify(
        provider="anthropic",
        status=400,
        message=f"prompt is too long: {size} tokens > {window} maximum",
        code="invalid_request_error",
    )


def agentic_model(
    *,
    answer_chars: int = 400,
    dump_size: int = 12_000,
    report_usage: bool = True,
    window: int | None = None,
    summary: str = SUMMARY,
) -> Callable[[ModelRequest], TurnSpec]:
    """A model that answers every prompt with one large `read`, then a text answer, and writes
    `summary` when asked for one (an empty one fails). It reports usage equal to the estimated
    request size and, given a `window`, rejects bigger requests as a real one would."""
    counter = {"n": 0}

    def respond(request: ModelRequest) -> TurnSpec:
        size = request_tokens(request)
        if window is not None and size > window:
            return ScriptedTurn(error=overflow_error(size, window))
        usage = Usage(input_tokens=size, output_tokens=30)
        if is_summary_request(request):
            return ScriptedTurn(text=summary, usage=usage if report_usage else None)
        last = request.messages[-1]
        if last.role == "tool":
            return ScriptedTurn(text="a" * answer_chars, usage=usage if report_usage else None)
        counter["n"] += 1
        call = ScriptedCall(
            name="read",
            arguments={"path": f"src/file{counter['n']}.py", "size": dump_size},
        )
        return ScriptedTurn(tool_calls=[call], usage=usage if report_usage else None)

    return respond
