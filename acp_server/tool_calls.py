"""A tool call as the client sees it: its content (diffs, live output or terminal, a subagent's
work, the result) and the `tool_call` / `tool_call_update` payloads, built from agent events by
`acp_server.updates`.

A `task` call shows its subagent's work inside its own card (`ChildWork`, `work_log`): a list
of the subagent's tool calls with their state, its text while it runs, then its answer (the
call's result) once; its calls are not cards of their own (Toad showed "Read README.md" as if the
main agent had read it), except one the user must answer a prompt for
(`UpdateTranslator.promote`). The child session is named as text (its id, and the command that
replays it) and in `_meta.earshot.childSessionId`: no `earshot://` link, which Zed would hand to
the operating system (a dead link), until the standard subagent updates land."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, assert_never

from agent.backends import ToolUi
from agent.events import ToolCallFinished, ToolStatus
from providers.types import ImagePart, TextPart, ToolResultPart

if TYPE_CHECKING:
    from acp_server.protocol.common import (
        ContentBlockImage,
        ContentBlockText,
        JsonObject,
        JsonValue,
        ToolCallContent,
        ToolCallLocation,
        ToolCallStatus,
    )
    from acp_server.protocol.prompt import SessionUpdateToolCall, SessionUpdateToolCallUpdate


def text_block(text: str) -> ContentBlockText:
    return {"type": "text", "text": text}


def wire_status(status: ToolStatus) -> ToolCallStatus:
    match status:
        case "completed":
            return "completed"
        case "failed" | "interrupted" | "denied":
            return "failed"
        case _:
            assert_never(status)


def locations(ui: ToolUi) -> list[ToolCallLocation]:
    locations: list[ToolCallLocation] = []
    for location in ui.locations:
        item: ToolCallLocation = {"path": location.path}
        if location.line is not None:
            item["line"] = location.line
        locations.append(item)
    return locations


def diffs(ui: ToolUi) -> list[ToolCallContent]:
    return [
        {"type": "diff", "path": diff.path, "oldText": diff.old_text, "newText": diff.new_text}
        for diff in ui.diffs
    ]


def text_content(text: str) -> ToolCallContent:
    return {"type": "content", "content": text_block(text)}


def terminal_verdict(event: ToolCallFinished) -> list[ToolCallContent]:
    """What the embedded terminal cannot say itself: that the command was killed for running
    too long (the first line of the result, "Command timed out after 5s and was killed.")."""
    raw = event.raw_output
    if not isinstance(raw, dict) or raw.get("timed_out") is not True:
        return []
    first_line = event.result.text.split("\n", 1)[0].removesuffix(" Output so far:")
    return [text_content(first_line)] if first_line else []


def result_blocks(result: ToolResultPart) -> list[ToolCallContent]:
    blocks: list[ToolCallContent] = []
    for part in result.content:
        match part:
            case TextPart():
                if part.text:
                    blocks.append(text_content(part.text))
            case ImagePart():
                if part.data is not None:
                    image: ContentBlockImage = {
                        "type": "image",
                        "data": part.data,
                        "mimeType": part.media_type,
                    }
                    blocks.append({"type": "content", "content": image})
                elif part.url is not None:
                    blocks.append(text_content(part.url))
            case _:
                assert_never(part)
    return blocks


def raw_output(event: ToolCallFinished) -> JsonObject | None:
    """`rawOutput`, always an object (Toad type-checks it as one and drops the whole update
    otherwise): the tool's own when it is one, else the result text as `output` (and a tool's
    non-object value as `value`). None when there is nothing to say."""
    raw = event.raw_output
    if isinstance(raw, dict):
        return raw
    output: dict[str, JsonValue] = {"output": event.result.text} if event.result.text else {}
    if raw is not None:
        output["value"] = raw
    return output or None


def raw_input_object(arguments: JsonValue) -> JsonObject | None:
    """`rawInput`, always an object (as `raw_output`): a call's arguments are one, except a
    model's malformed ones, which are shown as `value`."""
    if arguments is None:
        return None
    return arguments if isinstance(arguments, dict) else {"value": arguments}


def final_content(call: ToolCall, event: ToolCallFinished) -> list[ToolCallContent]:
    """A finished call's content. One diff per edit: an edit's result text repeats its diff in
    unified form, which clients render as Markdown (Zed: `-`/`+` lines become bullet lists,
    `render_markdown_output`), so a call that shows diff content and succeeded does not add its
    result text. A terminal shows its own output; only its verdict is added."""
    if call.terminal_id is not None:
        return call.content(terminal_verdict(event))
    if call.ui.diffs and event.status == "completed":
        return call.content()
    return call.content(result_blocks(event.result))


def fenced(text: str, language: str = "") -> str:
    """`text` as a Markdown code block, literal whatever it holds (the fence is longer than any
    run of backticks in it)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


ChildState = Literal["pending", "running", "completed", "failed", "refused", "interrupted"]
_MARKS: dict[ChildState, str] = {
    "pending": "◦",
    "running": "◦",
    "completed": "✓",
    "failed": "✗",
    "refused": "✗",
    "interrupted": "✗",
}


@dataclass(slots=True)
class ChildWork:
    """One tool call of a subagent, as its `task` call lists it."""

    call_id: str
    title: str
    state: ChildState = "pending"


def child_state(status: ToolStatus) -> ChildState:
    match status:
        case "completed" | "failed" | "interrupted":
            return status
        case "denied":
            return "refused"
        case _:
            assert_never(status)


def work_log(work: list[ChildWork], child_session_id: str | None) -> str:
    """A subagent's calls as a Markdown list (titles as code spans: a file named `__init__.py`
    or a command holding `*` must not turn into emphasis), and where its session is."""
    lines = ["The subagent's work:", ""] if work else []
    for item in work:
        said = "" if item.state in ("completed", "pending") else f" ({item.state})"
        lines.append(f"- {_MARKS[item.state]} {code_span(item.title)}{said}")
    if child_session_id is not None:
        replay = code_span(f"earshot sessions replay {child_session_id}")
        lines.extend(["", f"Its session: {code_span(child_session_id)} ({replay} shows it)."])
    return "\n".join(lines).strip()


def code_span(text: str) -> str:
    """`text` as one Markdown code span, on one line."""
    flat = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {flat} " if flat.startswith("`") or flat.endswith("`") else flat
    return f"{fence}{padded}{fence}"


@dataclass(slots=True)
class ToolCall:
    """What the client was shown of one call (ACP replaces a call's whole `content` on every
    update, so it is kept)."""

    call_id: str
    name: str
    ui: ToolUi
    parent_call_id: str | None
    announced: bool = False
    raw_input: JsonValue = None
    output: str = ""
    terminal_id: str | None = None
    subagent_text: list[str] = field(default_factory=lambda: [])
    """A `task` call's subagent's text while it runs (its answer is the call's result)."""
    subagent_message: str | None = None
    subagent_dirty: bool = False
    child_session_id: str | None = None
    """The session a `task` call's subagent runs in."""
    work: list[ChildWork] = field(default_factory=lambda: [])
    """A `task` call's subagent's calls, in order."""

    def content(self, extra: list[ToolCallContent] | None = None) -> list[ToolCallContent]:
        items = diffs(self.ui)
        if self.terminal_id is not None:
            items.append({"type": "terminal", "terminalId": self.terminal_id})
        elif self.output:
            items.append(text_content(self.output))
        if self.work or self.child_session_id is not None:
            items.append(text_content(work_log(self.work, self.child_session_id)))
        if self.subagent_text:
            items.append(text_content("".join(self.subagent_text)))
        if extra:
            items.extend(extra)
        return items

    def child(self, call_id: str) -> ChildWork:
        """The work item of this (`task`) call's subagent's call `call_id`."""
        for item in self.work:
            if item.call_id == call_id:
                return item
        item = ChildWork(call_id=call_id, title=call_id)
        self.work.append(item)
        return item

    def update(self) -> SessionUpdateToolCallUpdate:
        """A `tool_call_update` naming this call, to add fields to."""
        return {"sessionUpdate": "tool_call_update", "toolCallId": self.call_id}

    def announcement(self, raw_input: JsonValue) -> SessionUpdateToolCall:
        """The `tool_call` that makes the call known to the client (marks it announced)."""
        self.announced = True
        update: SessionUpdateToolCall = {
            "sessionUpdate": "tool_call",
            "toolCallId": self.call_id,
            "title": self.ui.title,
            "kind": self.ui.kind,
            "status": "pending",
            "locations": locations(self.ui),
            "content": self.content(),
        }
        shown_input = raw_input_object(raw_input)
        if shown_input is not None:
            update["rawInput"] = shown_input
        meta = self.meta()
        if meta is not None:
            update["_meta"] = meta
        return update

    def meta(self) -> dict[str, JsonValue] | None:
        """`_meta.earshot`: the subagent call this one is nested in, the child session a
        `task` call runs."""
        earshot: dict[str, JsonValue] = {}
        if self.parent_call_id is not None:
            earshot["parentToolCallId"] = self.parent_call_id
        if self.child_session_id is not None:
            earshot["childSessionId"] = self.child_session_id
        return {"earshot": earshot} if earshot else None
