"""Compaction: the earlier conversation replaced by a model-written summary, in the request only.

The steps, each a function here so each can be tested alone:

1. `choose_cut` picks the first message kept verbatim. Cuts fall on turn boundaries (a user
   message), keeping the last K turns within a token budget. Because the cut is before a user
   message, every assistant message is kept whole or dropped whole: an assistant tool-call
   message is never split from the tool message answering it, and the reasoning an assistant
   message carries (an Anthropic thinking block with its signature, an OpenAI reasoning item)
   stays next to the text and calls that followed it, in order, as the vendors require. When a
   single turn is itself too big (one prompt followed by hundreds of tool rounds), the cut may
   fall before an assistant message instead: still between whole messages, never between a call
   and its result.
2. `render_transcript` writes the part before the cut as plain text, within a budget.
3. `ask_for_summary` asks the model for a summary and collects the text of its stream: at the
   end of the conversation itself when it fits (`shared_summary_request`: the prompt the
   provider has just cached, plus a request for the summary), else from a plain-text transcript
   (`summary_request`: a summarisation system prompt, the transcript, optional instructions).
4. `build_preamble` joins the summary, the open todos and the files touched.

The transcript records the cut and the preamble (`agent.transcript.Compaction`; a session's as a
`CompactionEntry`); the request is rebuilt from them. The full history is never touched.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Final, assert_never

import anyio

from agent.context.shaping import cap_text
from agent.context.tokens import CHARS_PER_TOKEN, TokenCounter
from agent.events import TodoItem
from providers.assemble import MessageAssembler
from providers.catalog import ModelInfo
from providers.model import Model
from providers.records import Record
from providers.types import (
    ImagePart,
    Message,
    ModelRequest,
    PromptCache,
    ProviderError,
    ReasoningEffort,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)

SUMMARY_SYSTEM_PROMPT: Final = """\
You summarise a coding session between a user and an AI coding agent so that the agent can \
continue the work in a fresh context, with only your summary and the most recent messages.

Write a summary that lets the work continue without asking the user again:
- The user's goals and every explicit request or constraint, quoting the user where wording \
matters.
- What has been done: files created or changed and how, commands run and their outcomes.
- What was learned: relevant files, functions, types, commands, errors and their causes and fixes.
- Decisions made, and why.
- What is in progress, what is left, and the next step.

Keep exact file paths, identifiers, commands, error messages and numbers. Do not invent anything \
that is not in the conversation. Write plain notes for yourself, with no preamble and no \
sign-off."""

PREAMBLE_OPENING: Final = (
    "[This conversation was compacted to free context. Summary of the earlier part:]"
)
PREAMBLE_CLOSING: Final = "[The conversation continues from here.]"
SUMMARY_REQUEST_OPENING: Final = "[Compaction: a summary is needed.]"

FILE_READERS: Final = frozenset({"read"})
FILE_WRITERS: Final = frozenset({"edit", "write"})
_FILES_LISTED: Final = 40
_USER_CHARS: Final = 6_000
_ASSISTANT_CHARS: Final = 3_000
_ARGUMENT_CHARS: Final = 300
_RESULT_CHARS: Final = 1_200
_REQUESTS_KEPT: Final = 10
_REQUEST_CHARS: Final = 400


class CompactionPolicy(Record):
    """When to compact and how much to keep."""

    threshold_ratio: float = 0.8
    """Auto-compaction starts when a request would fill this much of the window."""
    keep_turns: int = 2
    """Turns (a user message and what followed it) kept verbatim, when they fit `tail_ratio`."""
    tail_ratio: float = 0.3
    """The verbatim tail's share of the window, at most."""
    tail_max_tokens: int = 40_000
    """The verbatim tail never exceeds this however large the window."""
    summary_max_tokens: int = 8_192
    """The summary's output cap (lower for small windows)."""
    unknown_window_input_tokens: int = 100_000
    """How much transcript a manual compaction sends when the window is unknown."""

    def threshold(self, window: int | None, max_output: int | None = None) -> int | None:
        """Tokens at which to compact: `threshold_ratio` of the window, lowered if needed so the
        model keeps room for a modest reply. None when the window is unknown: then nothing is
        compacted automatically (guessing would truncate a local model's real, larger window)."""
        if window is None or window <= 0:
            return None
        threshold = int(window * self.threshold_ratio)
        reserve = min(max_output or 0, window // 4, 16_384)
        return max(1, min(threshold, window - reserve))

    def tail_budget(self, window: int | None) -> int:
        if window is None or window <= 0:
            return self.tail_max_tokens
        return max(1, min(self.tail_max_tokens, int(window * self.tail_ratio)))

    def summary_tokens(self, window: int | None, max_output: int | None) -> int:
        cap = self.summary_max_tokens
        if window is not None and window > 0:
            cap = min(cap, max(256, window // 10))
        if max_output is not None and max_output > 0:
            cap = min(cap, max_output)
        return cap

    def transcript_tokens(self, window: int | None, summary_tokens: int) -> int:
        """Input budget of the summary request (its own prompt and reply must fit too)."""
        if window is None or window <= 0:
            return self.unknown_window_input_tokens
        room = int(window * self.threshold_ratio) - summary_tokens - 600
        return max(256, room)


def window_of(info: ModelInfo | None) -> int | None:
    """The context window the catalog (with the user's overrides applied) gives the model."""
    if info is None or info.context_window is None or info.context_window <= 0:
        return None
    return info.context_window


# ------------------------------------------------------------------------------- the cut


def choose_cut(
    messages: Sequence[Message],
    *,
    keep_turns: int,
    tail_budget: int,
    counter: TokenCounter,
    start: int = 0,
) -> int | None:
    """Index of the first message to keep verbatim, or None when nothing can be compacted.

    `start` is the first message that is not itself a previous summary (something real must lie
    before the cut). Preferred: the boundary keeping the last `keep_turns` turns, moved later while
    the tail is over `tail_budget`. If even the latest turn is over budget (one prompt followed by
    many tool rounds), the cut falls inside it, before an assistant message; failing that, at the
    latest boundary there is, which compacts the most. A single turn within budget is not cut.
    """
    count = len(messages)
    if count - start < 2:
        return None
    suffix = [0] * (count + 1)
    for index in range(count - 1, -1, -1):
        suffix[index] = suffix[index + 1] + counter.message(messages[index])
    users = [i for i in range(start + 1, count) if messages[i].role == "user"]
    if users:
        preferred = users[max(0, len(users) - max(1, keep_turns))]
        for boundary in users:
            if boundary >= preferred and suffix[boundary] <= tail_budget:
                return boundary
    last_turn = users[-1] if users else start
    if suffix[last_turn] <= tail_budget:
        return None  # one turn, and it fits: nothing worth summarising
    # The latest turn alone is over budget: cut inside it, before one of its assistant messages.
    assistants = [i for i in range(last_turn + 1, count) if messages[i].role == "assistant"]
    for boundary in assistants:
        if suffix[boundary] <= tail_budget:
            return boundary
    boundaries = users + assistants
    return max(boundaries) if boundaries else None


# -------------------------------------------------------------------- what the preamble lists


class FilesTouched(Record):
    modified: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    """Read and never modified."""


def files_touched(messages: Sequence[Message]) -> FilesTouched:
    """Paths of the files the agent read, edited or wrote (calls that failed are left out),
    in the order first touched."""
    failed = {
        part.tool_call_id
        for message in messages
        if message.role == "tool"
        for part in message.parts
        if isinstance(part, ToolResultPart) and part.is_error
    }
    modified: dict[str, None] = {}
    read: dict[str, None] = {}
    for message in messages:
        if message.role != "assistant":
            continue
        for part in message.parts:
            if not isinstance(part, ToolCallPart) or part.id in failed:
                continue
            if part.name not in FILE_READERS and part.name not in FILE_WRITERS:
                continue
            arguments = part.arguments
            path = arguments.get("path") if isinstance(arguments, dict) else None
            if not isinstance(path, str) or not path:
                continue
            (modified if part.name in FILE_WRITERS else read).setdefault(path, None)
    return FilesTouched(modified=tuple(modified), read=tuple(p for p in read if p not in modified))


def build_preamble(
    summary: str, *, todos: Sequence[TodoItem] = (), files: FilesTouched | None = None
) -> str:
    """The text that stands in for the compacted part of the conversation."""
    sections = [PREAMBLE_OPENING, summary.strip()]
    open_items = [item for item in todos if item.status != "completed"]
    if open_items:
        marks = {"in_progress": "[in progress]", "pending": "[pending]"}
        lines = [f"- {marks.get(item.status, '[pending]')} {item.content}" for item in open_items]
        sections.append(
            "Open todos (the plan when the conversation was compacted):\n" + "\n".join(lines)
        )
    if files is not None and (files.modified or files.read):
        lines: list[str] = []
        if files.modified:
            lines.append("- modified: " + _listing(files.modified))
        if files.read:
            lines.append("- read: " + _listing(files.read))
        sections.append("Files touched so far:\n" + "\n".join(lines))
    sections.append(PREAMBLE_CLOSING)
    return "\n\n".join(sections)


def _listing(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:_FILES_LISTED])
    more = len(paths) - _FILES_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


# -------------------------------------------------------------------------- the transcript


def render_message(message: Message) -> str:
    """One message as transcript text: long texts and tool results cut to head and tail."""
    lines: list[str] = []
    match message.role:
        case "user":
            text = " ".join(p.text for p in message.parts if isinstance(p, TextPart))
            images = sum(1 for p in message.parts if isinstance(p, ImagePart))
            lines.append("User: " + cap_text(text, _USER_CHARS) + (" [image]" * images))
        case "assistant":
            for part in message.parts:
                if isinstance(part, TextPart) and part.text.strip():
                    lines.append("Assistant: " + cap_text(part.text, _ASSISTANT_CHARS))
                elif isinstance(part, ToolCallPart):
                    arguments = part.invalid_arguments or json.dumps(
                        part.arguments, ensure_ascii=False
                    )
                    lines.append(
                        f"Assistant called {part.name}: {cap_text(arguments, _ARGUMENT_CHARS)}"
                    )
                elif isinstance(part, ReasoningPart):
                    continue  # the model's private reasoning; its conclusions are in the text
        case "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    label = "Error from" if part.is_error else "Result of"
                    lines.append(f"{label} {part.name}: {cap_text(part.text, _RESULT_CHARS)}")
        case _:
            assert_never(message.role)
    return "\n".join(lines)


def render_transcript(messages: Sequence[Message], *, max_chars: int, start: int = 0) -> str:
    """`messages` as plain text within about `max_chars`. When it does not all fit, the newest
    messages are kept (plus a previous summary, the first `start` messages, which is the oldest
    and densest part) and what was left out is stated."""
    chunks = [render_message(message) for message in messages]
    chunks = [chunk for chunk in chunks if chunk]
    if sum(len(chunk) + 2 for chunk in chunks) <= max_chars:
        return "\n\n".join(chunks)
    head = [cap_text(chunk, max(200, max_chars // 3)) for chunk in chunks[:start]]
    budget = max_chars - sum(len(chunk) + 2 for chunk in head) - 100
    tail: list[str] = []
    for chunk in reversed(chunks[start:]):
        if len(chunk) + 2 > budget:
            if not tail:
                tail.append(cap_text(chunk, max(200, budget)))
            break
        tail.append(chunk)
        budget -= len(chunk) + 2
    tail.reverse()
    omitted = len(chunks) - len(head) - len(tail)
    note = [f"[... {omitted} earlier messages left out to fit ...]"] if omitted > 0 else []
    return "\n\n".join([*head, *note, *tail])


# ---------------------------------------------------------------------------- the summary


def summary_request(
    transcript: str, *, instructions: str | None, max_output_tokens: int
) -> ModelRequest:
    """The request asking the model for a summary of `transcript`."""
    text = (
        "Here is the conversation so far, as a transcript:\n\n<conversation>\n"
        f"{transcript}\n</conversation>\n\n"
    )
    if instructions and instructions.strip():
        text += (
            f"The user asks that the summary follow these instructions:\n{instructions.strip()}\n\n"
        )
    text += "Write the summary now."
    return ModelRequest(
        system=SUMMARY_SYSTEM_PROMPT,
        messages=[Message(role="user", parts=[TextPart(text=text)])],
        tools=(),
        tool_choice="none",
        max_output_tokens=max_output_tokens,
    )


def shared_summary_request(
    *,
    system: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    kept: int,
    instructions: str | None,
    max_output_tokens: int,
    reasoning_effort: ReasoningEffort | None,
    cache: PromptCache | None,
) -> ModelRequest:
    """The summary asked for at the end of the conversation itself: the request the loop would
    send next (same system prompt, tools, tool choice, effort and caching hints, so that its
    whole prompt is a prefix the provider has cached), plus one user message asking for the
    summary. The last `kept` messages stay verbatim after it."""
    text = (
        f"{SUMMARY_REQUEST_OPENING}\nDo not call any tool now. The conversation above is about "
        "to be compacted: everything in it will be replaced by your summary, except the last "
        f"{kept} messages, which stay as they are after it.\n\n{SUMMARY_SYSTEM_PROMPT}\n\n"
    )
    if instructions and instructions.strip():
        text += (
            f"The user asks that the summary follow these instructions:\n{instructions.strip()}\n\n"
        )
    text += "Write the summary now."
    return ModelRequest(
        system=system,
        messages=[*messages, Message(role="user", parts=[TextPart(text=text)])],
        tools=tools,
        reasoning_effort=reasoning_effort,
        max_output_tokens=max_output_tokens,
        cache=cache,
    )


def is_summary_request(request: ModelRequest) -> bool:
    """Whether `request` is a compaction's summary request (for scripted models in tests)."""
    if request.system == SUMMARY_SYSTEM_PROMPT:
        return True
    last = request.messages[-1] if request.messages else None
    return (
        last is not None and last.role == "user" and last.text.startswith(SUMMARY_REQUEST_OPENING)
    )


class Summary(Record):
    text: str = ""
    usage: Usage | None = None
    error: ProviderError | None = None


async def summarise(model: Model, request: ModelRequest) -> Summary:
    """Stream `request` and collect the text. A failure is returned, never raised (cancellation
    still propagates)."""
    assembler = MessageAssembler()
    events = model.stream(request)
    try:
        async for event in events:
            assembler.feed(event)
    except Exception as exc:
        error = ProviderError(
            kind="unknown",
            message=f"{type(exc).__name__}: {exc}",
            retryable=False,
            provider=model.provider_id,
        )
        return Summary(usage=assembler.usage, error=error)
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            with anyio.move_on_after(5, shield=True):
                await aclose()
    if assembler.error is not None:
        return Summary(usage=assembler.usage, error=assembler.error)
    text = assembler.message().text.strip()
    if not text:
        error = ProviderError(
            kind="unknown",
            message="the model returned an empty summary",
            retryable=False,
            provider=model.provider_id,
        )
        return Summary(usage=assembler.usage, error=error)
    return Summary(text=text, usage=assembler.usage)


_SUMMARY_RETRIES: Final = 2
_SUMMARY_RETRY_MAX_DELAY: Final = 20.0


async def ask_for_summary(
    model: Model,
    *,
    shared: ModelRequest | None,
    transcript_request: Callable[[int], ModelRequest],
    budget_chars: int,
    max_output: int,
    record: Callable[[Usage], None],
) -> str | ProviderError:
    """The summary: asked with `shared` (`shared_summary_request`) when there is one, else with
    a transcript of at most `budget_chars` (`transcript_request`). A transient failure is
    retried briefly (a turn is waiting); an overflow moves from the shared request to the
    transcript, then halves the transcript once. Each call's usage goes to `record`."""
    request = shared if shared is not None else transcript_request(budget_chars)
    error: ProviderError | None = None
    retries = 0
    shrunk = False
    while True:
        result = await summarise(model, request)
        if result.usage is not None:
            record(result.usage)
        if result.error is None:
            return cap_summary(result.text, max_output)
        error = result.error
        if error.kind == "context_overflow" and request is shared:
            request = transcript_request(budget_chars)
            continue
        if error.kind == "context_overflow" and not shrunk:
            shrunk = True
            budget_chars //= 2
            request = transcript_request(budget_chars)
            continue
        delay = _summary_retry_delay(error, retries)
        if delay is None:
            break
        retries += 1
        await anyio.sleep(delay)
    assert error is not None
    return error


def _summary_retry_delay(error: ProviderError, retries: int) -> float | None:
    """Seconds before retrying a failed summary call, or None to give up."""
    if not error.retryable or retries >= _SUMMARY_RETRIES:
        return None
    delay = error.retry_after if error.retry_after is not None else 2.0**retries
    return delay if delay <= _SUMMARY_RETRY_MAX_DELAY else None


def unsummarised_note(dropped: Sequence[Message], reason: str) -> str:
    """What stands in for a summary that could not be written: it says so, and keeps the
    user's requests from the part left out (the most recent ones, shortened)."""
    requests = [
        " ".join(message.text.split())
        for message in dropped
        if message.role == "user" and message.text.strip()
    ]
    lines = [
        f"The earlier part of this conversation ({len(dropped)} messages) was left out to fit the "
        f"context window; it could not be summarised ({reason})."
    ]
    if requests:
        shown = requests[-_REQUESTS_KEPT:]
        lines.append("The user's requests in that part, oldest first:")
        lines += [
            "- " + (text if len(text) <= _REQUEST_CHARS else text[: _REQUEST_CHARS - 1] + "…")
            for text in shown
        ]
        if len(requests) > len(shown):
            lines.append(f"(and {len(requests) - len(shown)} earlier ones)")
    return "\n".join(lines)


def cap_summary(text: str, max_tokens: int) -> str:
    """A summary within about `max_tokens` (a model may ignore its output cap)."""
    return cap_text(text, max(256, int(max_tokens * CHARS_PER_TOKEN * 1.25)))
