"""Translating `AgentEvent`s into ACP `session/update` payloads.

Pure bookkeeping, no I/O: `UpdateTranslator.translate(event)` returns the updates to send, in
order. It remembers each tool call (title, diffs, live output, terminal) because ACP replaces a
call's whole `content` list on every update.

Choices worth knowing:
- A tool call is announced (`tool_call`, status pending) when the model starts it; its arguments
  arrive with `ToolCallReady` as `rawInput`, `locations` and diff content. Denied, interrupted and
  failed calls all end `failed` (ACP has no other terminal status).
- Subagent work (events with `parent_call_id`): the subagent's tool calls appear as their own tool
  calls (tagged `_meta.earshot.parentToolCallId`); its text is shown inside the parent `task`
  call's content, refreshed at each subagent message boundary and when the parent finishes.
- `notice` and `compaction_*` go out only when the client advertised them. Without them a manual
  or automatic compaction is shown as a tool call ("Compacting the conversation"), and warning or
  error notices as agent text; info notices and retries are only logged.
- `usage_update` needs a window size: the catalog always gives one (the model's, the one its server
  reported, or a default), and a default is said as such in `_meta.earshot.contextWindowAssumed`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, assert_never, cast

from acp_server.capabilities import ClientCapabilities
from acp_server.jsonrpc import JsonObject
from agent.backends import PermissionOption, PermissionPrompt, ToolUi
from agent.events import (
    AgentEvent,
    CommandOutput,
    CompactionFinished,
    CompactionStarted,
    ModeChanged,
    ModelChanged,
    Notice,
    PermissionDecided,
    ReasoningChunk,
    Retrying,
    TextChunk,
    TitleChanged,
    TodoItem,
    TodosChanged,
    ToolCallArguments,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallReady,
    ToolCallRunning,
    ToolCallStarted,
    ToolStatus,
    TurnEnded,
    TurnStarted,
    UsageUpdated,
    UserMessageAdded,
)
from providers.types import ImagePart, TextPart, ToolResultPart

OUTPUT_DISPLAY_LIMIT = 64_000
"""Characters of live command output kept in a tool call's content (the tail)."""


def text_block(text: str) -> JsonObject:
    return {"type": "text", "text": text}


def message_chunk(kind: str, text: str, message_id: str | None) -> JsonObject:
    update: JsonObject = {"sessionUpdate": kind, "content": text_block(text)}
    if message_id:
        update["messageId"] = message_id
    return update


def plan_update(items: tuple[TodoItem, ...]) -> JsonObject:
    """The todo list as ACP's `plan` update."""
    return {
        "sessionUpdate": "plan",
        "entries": [
            {"content": item.content, "priority": item.priority, "status": item.status}
            for item in items
        ],
    }


def _status(status: ToolStatus) -> str:
    match status:
        case "completed":
            return "completed"
        case "failed" | "interrupted" | "denied":
            return "failed"
        case _:
            assert_never(status)


def _locations(ui: ToolUi) -> list[JsonObject]:
    locations: list[JsonObject] = []
    for location in ui.locations:
        item: JsonObject = {"path": location.path}
        if location.line is not None:
            item["line"] = location.line
        locations.append(item)
    return locations


def _diffs(ui: ToolUi) -> list[JsonObject]:
    return [
        {"type": "diff", "path": diff.path, "oldText": diff.old_text, "newText": diff.new_text}
        for diff in ui.diffs
    ]


def _terminal_verdict(event: ToolCallFinished) -> list[JsonObject]:
    """What the embedded terminal cannot say itself: that the command was killed for running
    too long (the first line of the result, "Command timed out after 5s and was killed.")."""
    raw = cast("dict[str, Any]", event.raw_output) if isinstance(event.raw_output, dict) else {}
    if raw.get("timed_out") is not True:
        return []
    first_line = event.result.text.split("\n", 1)[0].removesuffix(" Output so far:")
    return [{"type": "content", "content": text_block(first_line)}] if first_line else []


def _result_blocks(result: ToolResultPart) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    for part in result.content:
        match part:
            case TextPart():
                if part.text:
                    blocks.append({"type": "content", "content": text_block(part.text)})
            case ImagePart():
                if part.data is not None:
                    image = {"type": "image", "data": part.data, "mimeType": part.media_type}
                    blocks.append({"type": "content", "content": image})
                elif part.url is not None:
                    blocks.append({"type": "content", "content": text_block(part.url)})
            case _:
                assert_never(part)
    return blocks


@dataclass(slots=True)
class _Call:
    call_id: str
    name: str
    ui: ToolUi
    parent_call_id: str | None
    announced: bool = False
    raw_input: object = None
    output: str = ""
    terminal_id: str | None = None
    subagent_text: list[str] = field(default_factory=lambda: [])
    subagent_message: str | None = None
    subagent_dirty: bool = False
    child_session_id: str | None = None
    """The session a `task` call's subagent runs in (`child_session_link`)."""

    def content(self, extra: list[JsonObject] | None = None) -> list[JsonObject]:
        items = _diffs(self.ui)
        if self.terminal_id is not None:
            items.append({"type": "terminal", "terminalId": self.terminal_id})
        elif self.output:
            items.append({"type": "content", "content": text_block(self.output)})
        if self.subagent_text:
            items.append({"type": "content", "content": text_block("".join(self.subagent_text))})
        if self.child_session_id is not None:
            items.append({"type": "content", "content": child_session_link(self.child_session_id)})
        if extra:
            items.extend(extra)
        return items


@dataclass(slots=True)
class UpdateTranslator:
    """Per-session state for turning events into updates."""

    client: ClientCapabilities = field(default_factory=ClientCapabilities)
    replaying: bool = False
    """`session/load`: each call is sent once, as a `tool_call` already in its final state
    (status, diff, output), when its result comes: nothing is ever shown pending or running."""
    calls: dict[str, _Call] = field(default_factory=lambda: {})
    compactions: set[str] = field(default_factory=lambda: set[str]())
    """Compactions announced as tool calls (a replayed one arrives finished only)."""

    def _tool_call(self, call: _Call, raw_input: object) -> JsonObject:
        call.announced = True
        update: JsonObject = {
            "sessionUpdate": "tool_call",
            "toolCallId": call.call_id,
            "title": call.ui.title,
            "kind": call.ui.kind,
            "status": "pending",
            "locations": _locations(call.ui),
            "content": call.content(),
        }
        if raw_input is not None:
            update["rawInput"] = raw_input
        meta = _call_meta(call)
        if meta is not None:
            update["_meta"] = meta
        return update

    def _call(self, call_id: str, name: str = "", parent: str | None = None) -> _Call:
        call = self.calls.get(call_id)
        if call is None:
            call = _Call(
                call_id=call_id, name=name, ui=ToolUi(title=name or call_id), parent_call_id=parent
            )
            self.calls[call_id] = call
        return call

    def _ensure_announced(self, call: _Call) -> list[JsonObject]:
        return [] if call.announced else [self._tool_call(call, None)]

    def _subagent_text(self, parent_id: str, text: str, message_id: str) -> list[JsonObject]:
        parent = self._call(parent_id)
        updates: list[JsonObject] = []
        if parent.subagent_message is not None and parent.subagent_message != message_id:
            parent.subagent_text.append("\n\n")
            updates.extend(self._flush_subagent(parent))
        parent.subagent_message = message_id
        parent.subagent_text.append(text)
        parent.subagent_dirty = True
        return updates

    def _flush_subagent(self, parent: _Call) -> list[JsonObject]:
        if not parent.subagent_dirty:
            return []
        parent.subagent_dirty = False
        updates = self._ensure_announced(parent)
        updates.append(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": parent.call_id,
                "content": parent.content(),
            }
        )
        return updates

    def translate(self, event: AgentEvent) -> list[JsonObject]:
        """The updates one event becomes (possibly none)."""
        match event:
            case TurnStarted() | ToolCallArguments():
                return []
            case PermissionDecided():
                return []
            case UserMessageAdded():
                return []
            case TextChunk():
                if event.parent_call_id is not None:
                    return self._subagent_text(event.parent_call_id, event.text, event.message_id)
                return [message_chunk("agent_message_chunk", event.text, event.message_id)]
            case ReasoningChunk():
                if event.parent_call_id is not None:
                    return []
                return [message_chunk("agent_thought_chunk", event.text, event.message_id)]
            case ToolCallStarted():
                call = self._call(event.call_id, event.name, event.parent_call_id)
                call.ui = event.ui
                call.name = event.name
                if self.replaying:
                    return []
                updates: list[JsonObject] = []
                if event.parent_call_id is not None:
                    updates.extend(self._flush_subagent(self._call(event.parent_call_id)))
                if call.announced:
                    return updates
                updates.append(self._tool_call(call, None))
                return updates
            case ToolCallReady():
                call = self._call(event.call_id, event.name, event.parent_call_id)
                call.ui = event.ui
                call.raw_input = event.arguments
                if self.replaying:
                    return []
                if not call.announced:
                    return [self._tool_call(call, event.arguments)]
                return [
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": call.call_id,
                        "title": call.ui.title,
                        "kind": call.ui.kind,
                        "locations": _locations(call.ui),
                        "content": call.content(),
                        "rawInput": event.arguments,
                    }
                ]
            case ToolCallRunning():
                call = self._call(event.call_id, parent=event.parent_call_id)
                updates = self._ensure_announced(call)
                updates.append(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": call.call_id,
                        "status": "in_progress",
                    }
                )
                return updates
            case ToolCallProgress():
                call = self._call(event.call_id, parent=event.parent_call_id)
                if event.child_session_id is not None:
                    call.child_session_id = event.child_session_id
                    if self.replaying:
                        return []  # shown with the call's final state
                if event.terminal_id is not None:
                    call.terminal_id = event.terminal_id
                if event.text:
                    call.output = (call.output + event.text)[-OUTPUT_DISPLAY_LIMIT:]
                updates = self._ensure_announced(call)
                progress: JsonObject = {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call.call_id,
                    "content": call.content(),
                }
                if event.child_session_id is not None:
                    progress["_meta"] = _call_meta(call)
                updates.append(progress)
                return updates
            case ToolCallFinished():
                return self._finished(event)
            case TodosChanged():
                return [plan_update(event.items)]
            case CommandOutput():
                return [message_chunk("agent_message_chunk", event.text, None)]
            case UsageUpdated():
                if not event.context_window:
                    return []
                usage: JsonObject = {
                    "sessionUpdate": "usage_update",
                    "used": max(0, event.context_tokens),
                    "size": event.context_window,
                }
                if event.context_window_assumed:
                    # Nothing said how long the model's context is: `size` is a default.
                    usage["_meta"] = {"earshot": {"contextWindowAssumed": True}}
                if event.cost_usd is not None:
                    usage["cost"] = {"amount": event.cost_usd, "currency": "USD"}
                return [usage]
            case CompactionStarted():
                return self._compaction_started(event)
            case CompactionFinished():
                return self._compaction_finished(event)
            case Retrying():
                if not self.client.notices:
                    return []
                return [
                    {
                        "sessionUpdate": "notice",
                        "severity": "warning",
                        "title": f"Retrying the model call (attempt {event.attempt})",
                        "description": event.error.message,
                    }
                ]
            case ModelChanged() | ModeChanged():
                return []  # the live session re-sends the complete config options
            case TitleChanged():
                return [{"sessionUpdate": "session_info_update", "title": event.title}]
            case Notice():
                if self.client.notices:
                    return [
                        {
                            "sessionUpdate": "notice",
                            "severity": event.severity,
                            "title": event.message,
                        }
                    ]
                if event.severity == "info":
                    return []
                return [message_chunk("agent_message_chunk", f"\n\n⚠ {event.message}\n\n", None)]
            case TurnEnded():
                updates = []
                for call in self.calls.values():
                    updates.extend(self._flush_subagent(call))
                return updates
            case _:
                assert_never(event)

    def _finished(self, event: ToolCallFinished) -> list[JsonObject]:
        call = self._call(event.call_id, event.name, event.parent_call_id)
        if event.ui is not None:
            call.ui = event.ui
        if event.terminal_id is not None:
            call.terminal_id = event.terminal_id
        if self.replaying:
            return [self._replayed(call, event)]
        updates = self._ensure_announced(call)
        call.subagent_dirty = False
        call.output = ""
        extra = (
            _terminal_verdict(event)
            if call.terminal_id is not None
            else _result_blocks(event.result)
        )
        update: JsonObject = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call.call_id,
            "status": _status(event.status),
            "title": call.ui.title,
            "locations": _locations(call.ui),
            "content": call.content(extra),
        }
        raw_output: Any = event.raw_output
        update["rawOutput"] = raw_output if raw_output is not None else event.result.text
        if call.child_session_id is not None:
            update["_meta"] = _call_meta(call)
        updates.append(update)
        # The client keeps the final state; forgetting the call keeps long sessions small.
        del self.calls[event.call_id]
        return updates

    def _replayed(self, call: _Call, event: ToolCallFinished) -> JsonObject:
        """A replayed call in one message: announced in its final state."""
        update = self._tool_call(call, call.raw_input)
        update["status"] = _status(event.status)
        update["content"] = call.content(_result_blocks(event.result))
        raw_output: Any = event.raw_output
        update["rawOutput"] = raw_output if raw_output is not None else event.result.text
        del self.calls[event.call_id]
        return update

    def _compaction_started(self, event: CompactionStarted) -> list[JsonObject]:
        if self.client.compaction:
            return [
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": event.compaction_id,
                    "status": "in_progress",
                }
            ]
        title = "Compacting the conversation" + ("" if event.manual else " (context almost full)")
        self.compactions.add(event.compaction_id)
        return [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": f"compaction-{event.compaction_id}",
                "title": title,
                "kind": "think",
                "status": "in_progress",
            }
        ]

    def _compaction_finished(self, event: CompactionFinished) -> list[JsonObject]:
        if self.client.compaction:
            update: JsonObject = {
                "sessionUpdate": "compaction_update",
                "compactionId": event.compaction_id,
                "status": "completed" if event.ok else "failed",
            }
            if event.summary:
                update["summary"] = [text_block(event.summary)]
            if event.error:
                update["error"] = event.error
            return [update]
        text = event.summary if event.ok else (event.error or "compaction failed")
        if event.ok and event.tokens_before is not None and event.tokens_after is not None:
            text = f"{event.tokens_before} → {event.tokens_after} tokens\n\n{text}"
        update: JsonObject = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": f"compaction-{event.compaction_id}",
            "status": "completed" if event.ok else "failed",
            "content": [{"type": "content", "content": text_block(text)}] if text else [],
        }
        if event.compaction_id not in self.compactions:
            update.update(
                sessionUpdate="tool_call", title="Compacted the conversation", kind="think"
            )
        self.compactions.discard(event.compaction_id)
        return [update]


# ------------------------------------------------------------------------ permission prompts


def child_session_link(session_id: str) -> JsonObject:
    """The `resource_link` a `task` call shows to the child session its subagent ran in (open
    it with `session/load`; `earshot sessions show` prints it)."""
    return {
        "type": "resource_link",
        "uri": f"earshot://session/{session_id}",
        "name": f"Subagent session {session_id}",
        "title": "Subagent session",
        "description": "What the subagent did: load this session to read it",
    }


def _call_meta(call: _Call) -> JsonObject | None:
    earshot: JsonObject = {}
    if call.parent_call_id is not None:
        earshot["parentToolCallId"] = call.parent_call_id
    if call.child_session_id is not None:
        earshot["childSessionId"] = call.child_session_id
    return {"earshot": earshot} if earshot else None


def permission_request(translator: UpdateTranslator, prompt: PermissionPrompt) -> JsonObject:
    """The params of `session/request_permission` for `prompt`. The prompt reaches the server
    one way only, the session's `Interaction`, and only once every event before it was sent
    (`agent.turn_stream.OrderedInteraction`): the call it names was announced already, and
    what the translator knows of it is current. A call that already ran keeps showing its
    terminal or output (a command the sandbox stopped, asking whether to run it outside)."""
    known = translator.calls.get(prompt.call_id)
    ui = prompt.ui
    content = _diffs(ui)
    if known is not None and known.terminal_id is not None:
        content.append({"type": "terminal", "terminalId": known.terminal_id})
    elif known is not None and known.output:
        content.append({"type": "content", "content": text_block(known.output)})
    tool_call: JsonObject = {
        "toolCallId": prompt.call_id,
        "title": ui.title,
        "kind": ui.kind,
        "status": "pending",
        "locations": _locations(ui),
        "content": content,
    }
    if prompt.raw_input is not None:
        tool_call["rawInput"] = prompt.raw_input
    return {"toolCall": tool_call, "options": [_permission_option(o) for o in prompt.options]}


def _permission_option(option: PermissionOption) -> JsonObject:
    """ACP has four option kinds; earshot's "for this session" and "always (in this project)"
    are both `allow_always`, told apart by the name and by `_meta.earshot.scope`."""
    rule = option.rule
    name = option.label or option.id
    meta: JsonObject | None = None
    match option.kind:
        case "allow_once":
            kind = "allow_once"
            if option.unsandboxed:
                meta = {"sandbox": "outside"}
        case "allow_session":
            kind = "allow_always"
            meta = {"scope": "session", "rule": rule}
            if rule:
                name = f"Allow `{rule}` for this session"
        case "allow_always":
            kind = "allow_always"
            meta = {"scope": "project", "rule": rule}
            if rule:
                name = f"Always allow `{rule}` in this project"
        case "reject_once":
            kind = "reject_once"
        case "reject_always":
            kind = "reject_always"
            meta = {"scope": "project", "rule": rule}
            if rule:
                name = f"Always reject `{rule}` in this project"
    wire: JsonObject = {"optionId": option.id, "name": name, "kind": kind}
    if meta is not None:
        wire["_meta"] = {"earshot": {key: value for key, value in meta.items() if value}}
    return wire
