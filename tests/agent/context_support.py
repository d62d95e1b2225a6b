"""Pieces shared by the context, compaction and usage tests: a catalog with a small window, a
tool with large outputs, a vendor-side tokenizer independent of the agent's estimate, and a
scripted model that answers summary requests."""

from __future__ import annotations

import json
from collections.abc import Callable

from pydantic import BaseModel

from agent.backends import ToolUi
from agent.context.compaction import is_summary_request
from agent.context.tokens import TokenCounter, request_overhead
from agent.tools import AnyTool, ToolContext, ToolOutput, define_tool
from agent.transcript import InMemoryTranscript
from providers.catalog import Cost, ModelCatalog, ModelOverride
from providers.codec import message_to_json
from providers.errors import classify
from providers.types import JsonValue, Message, ModelRequest, ProviderError, Usage
from providers.wire.scripted import ScriptedCall, ScriptedTurn, TurnSpec

SUMMARY = "SUMMARY: the user asked for a series of file dumps; all were done."


async def transcript_of(*messages: Message) -> InMemoryTranscript:
    """An in-memory transcript (a subagent's) holding `messages`."""
    transcript = InMemoryTranscript()
    for message in messages:
        await transcript.append(message)
    return transcript


def catalog(window: int | None, *, cost: Cost | None = None) -> ModelCatalog:
    """A catalog whose `scripted/scripted` model has `window` tokens (None: unknown)."""
    override = ModelOverride(context_window=window, cost=cost)
    return ModelCatalog.load(overrides={"scripted/scripted": override})


def request_tokens(request: ModelRequest) -> int:
    """The estimated size of a request as sent."""
    return TokenCounter().messages(request.messages) + request_overhead(
        request.system, request.tools
    )


VENDOR_CHARS_PER_TOKEN = 3
"""The scripted vendor's tokenizer: three characters of the request's JSON a token."""


class VendorTokenizer:
    """SYNTHETIC: how a vendor counts a request, independent of `agent.context.tokens`. It counts
    the request as JSON (keys, ids, metadata and escapes included) at three characters a token,
    which comes to about 1.3-1.5 times the agent's estimate: the agent undercounts, as it does
    on real tokenizers for code. Messages are counted once (they are immutable)."""

    def __init__(self) -> None:
        self._messages: dict[int, tuple[Message, int]] = {}

    def text(self, text: str) -> int:
        return -(-len(text) // VENDOR_CHARS_PER_TOKEN)

    def message(self, message: Message) -> int:
        known = self._messages.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        tokens = self.text(json.dumps(message_to_json(message)))
        self._messages[id(message)] = (message, tokens)
        return tokens

    def request(self, request: ModelRequest) -> int:
        tools = json.dumps(
            [[t.name, t.description, t.input_schema] for t in request.tools], default=str
        )
        return (
            self.text(request.system)
            + self.text(tools)
            + sum(self.message(message) for message in request.messages)
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
    tokenizer: VendorTokenizer | None = None,
) -> Callable[[ModelRequest], TurnSpec]:
    """A model that answers every prompt with one large `read`, then a text answer, and writes
    `summary` when asked for one (an empty one fails). It counts a request with `tokenizer`
    (default: the agent's own estimate, 30 tokens an answer), reports that count as its usage
    and, given a `window`, rejects a request over it by that count, as a real one would."""
    counter = {"n": 0}

    def size_of(request: ModelRequest) -> int:
        return request_tokens(request) if tokenizer is None else tokenizer.request(request)

    def output(text: str) -> int:
        return 30 if tokenizer is None else tokenizer.text(text)

    def respond(request: ModelRequest) -> TurnSpec:
        size = size_of(request)
        if window is not None and size > window:
            return ScriptedTurn(error=overflow_error(size, window))

        def usage(reply: str) -> Usage | None:
            return Usage(input_tokens=size, output_tokens=output(reply)) if report_usage else None

        if is_summary_request(request):
            return ScriptedTurn(text=summary, usage=usage(summary))
        last = request.messages[-1]
        if last.role == "tool":
            answer = "a" * answer_chars
            return ScriptedTurn(text=answer, usage=usage(answer))
        counter["n"] += 1
        arguments: dict[str, JsonValue] = {"path": f"src/file{counter['n']}.py", "size": dump_size}
        call = ScriptedCall(name="read", arguments=arguments)
        return ScriptedTurn(tool_calls=[call], usage=usage("read" + json.dumps(arguments)))

    return respond
