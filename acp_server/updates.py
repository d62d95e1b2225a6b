"""Translating `AgentEvent`s into ACP `session/update` payloads.

Pure bookkeeping, no I/O: `UpdateTranslator.translate(event)` returns the updates to send, in
order. It remembers each tool call (title, diffs, live output, terminal) because ACP replaces a
call's whole `content` list on every update.

Choices worth knowing:
- A tool call is announced (`tool_call`, status pending) once its arguments are complete
  (`ToolCallReady`), whole: its real kind, its title (a command's is the command itself),
  `rawInput`, `locations` and diff content. Clients keep what the first `tool_call` says (Zed
  renders a call first announced as `other` as Markdown for good). Denied, interrupted and failed
  calls all end `failed` (ACP has no other terminal status).
- `rawInput` and `rawOutput` are always objects (Toad type-checks them as such and drops the
  whole update otherwise); a successful edit shows its diff only, not its result text too.
- Subagent work (events with `parent_call_id`) is shown inside the parent `task` call
  (`acp_server.tool_calls`): its calls as a list with their state, its text while it runs
  (refreshed at each of its message boundaries), then its answer once, as the call's result. The
  same content comes back on `session/load` (the parent's transcript records the list:
  `agent.history.replay`). A subagent's call the user is asked about gets a card of its own first
  (`promote`, tagged `_meta.earshot.parentToolCallId`): a prompt names a card.
- The todo list is a plan (`acp_server.plans`): a `plan_update` with its id, and
  `plan_removed`, for a client that advertised the unstable `plan` capability; the whole `plan`
  for every other.
- `notice` and `compaction_*` go out only when the client advertised them. Without them a manual
  or automatic compaction is shown as a tool call ("Compacting the conversation"), and warning or
  error notices as agent text, as are prominent info notices (an MCP server's tools that joined
  late); other info notices and retries are only logged.
- `usage_update` needs a window size: the catalog always gives one (the model's, the one its server
  reported, or a default), and a default is said as such in `_meta.earshot.contextWindowAssumed`;
  Zed ignores that, so the model picker's entry says it too, and a notice (once per session,
  where the client takes notices) whose title is what Zed shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, assert_never, cast

from acp_server.capabilities import ClientCapabilities
from acp_server.plans import PlanView
from acp_server.tool_calls import (
    ToolCall,
    child_state,
    final_content,
    locations,
    raw_input_object,
    raw_output,
    result_blocks,
    text_block,
    text_content,
    wire_status,
)
from agent.backends import ToolUi
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

if TYPE_CHECKING:
    from acp_server.protocol.common import (
        JsonObject,
        JsonValue,
        ToolCallStatus,
    )
    from acp_server.protocol.prompt import (
        SessionUpdate,
        SessionUpdateAgentMessageChunk,
        SessionUpdateAgentThoughtChunk,
        SessionUpdateUsageUpdate,
        SessionUpdateUserMessageChunk,
    )

    MessageChunk = (
        SessionUpdateUserMessageChunk
        | SessionUpdateAgentMessageChunk
        | SessionUpdateAgentThoughtChunk
    )

OUTPUT_DISPLAY_LIMIT = 64_000
"""Characters of live command output kept in a tool call's content (the tail)."""


def message_chunk(
    kind: Literal["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"],
    text: str,
    message_id: str | None,
) -> MessageChunk:
    update: MessageChunk
    match kind:
        case "user_message_chunk":
            update = {"sessionUpdate": kind, "content": text_block(text)}
        case "agent_message_chunk":
            update = {"sessionUpdate": kind, "content": text_block(text)}
        case "agent_thought_chunk":
            update = {"sessionUpdate": kind, "content": text_block(text)}
    if message_id:
        update["messageId"] = message_id
    return update


def _usage(event: UsageUpdated) -> list[SessionUpdate]:
    if not event.context_window:
        return []
    usage: SessionUpdateUsageUpdate = {
        "sessionUpdate": "usage_update",
        "used": max(0, event.context_tokens),
        "size": event.context_window,
    }
    total = event.total
    meta: dict[str, JsonValue] = {
        # The session's tokens: how much of the input came from the provider's prompt cache
        # (priced at its cache-read price in `cost`) and how much was written to it.
        "inputTokens": total.input_tokens,
        "cachedInputTokens": total.cached_input_tokens,
        "cacheWriteTokens": total.cache_write_tokens,
        "outputTokens": total.output_tokens,
    }
    if event.context_window_assumed:
        # Nothing said how long the model's context is: `size` is a default (compaction uses
        # it too). Zed ignores `_meta`: the picker entry and a notice say it where Zed shows.
        meta["contextWindowAssumed"] = True
    usage["_meta"] = {"earshot": meta}
    if event.cost_usd is not None:
        usage["cost"] = {"amount": event.cost_usd, "currency": "USD"}
    return [usage]


def window_assumed_notice(window: int) -> SessionUpdate:
    return {
        "sessionUpdate": "notice",
        "severity": "info",
        "title": f"The model's context window is unknown: {window:,} tokens assumed",
        "description": "The context meter and compaction use that size. Set "
        "models.<provider/model>.contextWindow in earshot's settings to give the real one.",
    }


def _notice(client: ClientCapabilities, event: Notice) -> list[SessionUpdate]:
    if client.notices:
        return [{"sessionUpdate": "notice", "severity": event.severity, "title": event.message}]
    if event.severity == "info":
        if not event.prominent:
            return []
        return [message_chunk("agent_message_chunk", f"\n\nℹ {event.message}\n\n", None)]
    return [message_chunk("agent_message_chunk", f"\n\n⚠ {event.message}\n\n", None)]


def _retrying(client: ClientCapabilities, event: Retrying) -> list[SessionUpdate]:
    if not client.notices:
        return []
    return [
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": f"Retrying the model call (attempt {event.attempt})",
            "description": event.error.message,
        }
    ]


@dataclass(slots=True)
class UpdateTranslator:
    """Per-session state for turning events into updates."""

    client: ClientCapabilities = field(default_factory=ClientCapabilities)
    replaying: bool = False
    """`session/load`: each call is sent once, as a `tool_call` already in its final state
    (status, diff, output), when its result comes: nothing is ever shown pending or running."""
    calls: dict[str, ToolCall] = field(default_factory=lambda: {})
    compactions: set[str] = field(default_factory=lambda: set[str]())
    """Compactions announced as tool calls (a replayed one arrives finished only)."""
    window_noticed: bool = False
    """The assumed context window was said once (a notice)."""
    plans: PlanView = field(default_factory=PlanView)
    """The todo list as plans (`acp_server.plans`)."""

    def __post_init__(self) -> None:
        self.plans.plans = self.client.plans

    def translate(self, event: AgentEvent) -> list[SessionUpdate]:
        """The updates one event becomes (possibly none), in order."""
        match event:
            case TurnStarted() | ToolCallArguments() | UserMessageAdded() | PermissionDecided():
                return []  # a permission prompt travels as a request (`permission_request`)
            case ModelChanged() | ModeChanged():
                return []  # the live session re-sends the complete config options
            case TextChunk():
                return self._text(event)
            case ReasoningChunk():
                return self._reasoning(event)
            case ToolCallStarted():
                return self._started(event)
            case ToolCallReady():
                return self._ready(event)
            case ToolCallRunning():
                return self._running(event)
            case ToolCallProgress():
                return self._progress(event)
            case ToolCallFinished():
                return self._finished(event)
            case TodosChanged():
                return self.plans.changed(event)
            case CommandOutput():
                chunk = message_chunk("agent_message_chunk", event.text, None)
                if event.data:
                    chunk["_meta"] = cast("JsonObject", {"earshot": dict(event.data)})
                return [chunk]
            case UsageUpdated():
                return self._usage_update(event)
            case CompactionStarted():
                return self._compaction_started(event)
            case CompactionFinished():
                return self._compaction_finished(event)
            case Retrying():
                return _retrying(self.client, event)
            case TitleChanged():
                return [{"sessionUpdate": "session_info_update", "title": event.title}]
            case Notice():
                return _notice(self.client, event)
            case TurnEnded():
                return self._turn_ended()
            case _:
                assert_never(event)

    def _usage_update(self, event: UsageUpdated) -> list[SessionUpdate]:
        """The meter; before the first one drawn from an assumed window, a notice saying so
        (its title is what Zed shows), where the client takes notices."""
        updates = _usage(event)
        assumed = event.context_window_assumed and event.context_window
        noticed = self.window_noticed or self.replaying
        if assumed and updates and self.client.notices and not noticed:
            self.window_noticed = True
            updates.insert(0, window_assumed_notice(event.context_window or 0))
        return updates

    # ------------------------------------------------------------------------- messages

    def _text(self, event: TextChunk) -> list[SessionUpdate]:
        if event.parent_call_id is not None:
            return self._subagent_text(event.parent_call_id, event.text, event.message_id)
        return [message_chunk("agent_message_chunk", event.text, event.message_id)]

    def _reasoning(self, event: ReasoningChunk) -> list[SessionUpdate]:
        if event.parent_call_id is not None:
            return []
        return [message_chunk("agent_thought_chunk", event.text, event.message_id)]

    def _subagent_text(self, parent_id: str, text: str, message_id: str) -> list[SessionUpdate]:
        parent = self._call(parent_id)
        updates: list[SessionUpdate] = []
        if parent.subagent_message is not None and parent.subagent_message != message_id:
            parent.subagent_text.append("\n\n")
            updates.extend(self._flush_subagent(parent))
        parent.subagent_message = message_id
        parent.subagent_text.append(text)
        parent.subagent_dirty = True
        return updates

    def _flush_subagent(self, parent: ToolCall) -> list[SessionUpdate]:
        if not parent.subagent_dirty:
            return []
        parent.subagent_dirty = False
        updates = self._ensure_announced(parent)
        update = parent.update()
        update["content"] = parent.content()
        updates.append(update)
        return updates

    def _turn_ended(self) -> list[SessionUpdate]:
        updates: list[SessionUpdate] = []
        for call in self.calls.values():
            updates.extend(self._flush_subagent(call))
        return updates

    def _call(self, call_id: str, name: str = "", parent: str | None = None) -> ToolCall:
        call = self.calls.get(call_id)
        if call is None:
            call = ToolCall(
                call_id=call_id, name=name, ui=ToolUi(title=name or call_id), parent_call_id=parent
            )
            self.calls[call_id] = call
        return call

    def _ensure_announced(self, call: ToolCall) -> list[SessionUpdate]:
        return [] if call.announced else [call.announcement(None)]

    # ------------------------------------------------------------------ subagents' calls

    def _child(
        self, call: ToolCall, *, title: str | None = None, status: ToolStatus | None = None
    ) -> list[SessionUpdate]:
        """A subagent's call changed: its line in the parent `task` call's work list (the
        parent's card updated live; on replay it is sent whole when it finishes)."""
        assert call.parent_call_id is not None
        parent = self._call(call.parent_call_id)
        item = parent.child(call.call_id)
        item.title = title or item.title
        if status is not None:
            item.state = child_state(status)
        elif item.state == "pending" and title is None:
            item.state = "running"
        if self.replaying:
            return []
        updates = self._ensure_announced(parent)
        update = parent.update()
        update["content"] = parent.content()
        updates.append(update)
        return updates

    def promote(self, call_id: str) -> list[SessionUpdate]:
        """A subagent's call the user is about to be asked about gets a card of its own (the
        prompt names it), announced now with what is known of it; its later updates go to that
        card too. Nothing for any other call."""
        call = self.calls.get(call_id)
        if call is None or call.parent_call_id is None or call.announced:
            return []
        return [call.announcement(call.raw_input)]

    # ------------------------------------------------------------------------ tool calls

    def _started(self, event: ToolCallStarted) -> list[SessionUpdate]:
        """Remembered, not announced: the arguments are still streaming, so neither the real
        kind nor the title is known yet, and a client keeps what the first `tool_call` says
        (Zed renders a call first announced as `other` as Markdown for good, `ToolCall::from_acp`:
        a command would lose its `*` and backslashes). `_ready` announces it whole."""
        call = self._call(event.call_id, event.name, event.parent_call_id)
        call.ui = event.ui
        call.name = event.name
        if self.replaying or event.parent_call_id is None:
            return []
        return self._flush_subagent(self._call(event.parent_call_id))  # its text so far

    def _ready(self, event: ToolCallReady) -> list[SessionUpdate]:
        call = self._call(event.call_id, event.name, event.parent_call_id)
        call.ui = event.ui
        call.raw_input = event.arguments
        if event.parent_call_id is not None:
            return self._child(call, title=event.ui.title)
        if self.replaying:
            return []
        if not call.announced:
            return [call.announcement(event.arguments)]
        update = call.update()
        update["title"] = call.ui.title
        update["kind"] = call.ui.kind
        update["locations"] = locations(call.ui)
        update["content"] = call.content()
        shown_input = raw_input_object(event.arguments)
        if shown_input is not None:
            update["rawInput"] = shown_input
        return [update]

    def _running(self, event: ToolCallRunning) -> list[SessionUpdate]:
        call = self._call(event.call_id, parent=event.parent_call_id)
        updates = self._child(call) if call.parent_call_id is not None else []
        if not call.announced and call.parent_call_id is not None:
            return updates
        updates.extend(self._ensure_announced(call))
        update = call.update()
        update["status"] = "in_progress"
        updates.append(update)
        return updates

    def _progress(self, event: ToolCallProgress) -> list[SessionUpdate]:
        call = self._call(event.call_id, parent=event.parent_call_id)
        if event.child_session_id is not None:
            call.child_session_id = event.child_session_id
            if self.replaying:
                return []  # shown with the call's final state
        new_terminal = event.terminal_id is not None and event.terminal_id != call.terminal_id
        if event.terminal_id is not None:
            call.terminal_id = event.terminal_id
        if event.text:
            call.output = (call.output + event.text)[-OUTPUT_DISPLAY_LIMIT:]
        if call.parent_call_id is not None and not call.announced:
            return []  # a subagent's output is its own; its line in the list says it runs
        updates = self._ensure_announced(call)
        update = call.update()
        update["content"] = call.content()
        if new_terminal:
            # A client labels the terminal with how it was started (earshot's sandbox launcher);
            # Zed relabels a command's terminals with its title (`update_fields`).
            update["title"] = call.ui.title
        if event.child_session_id is not None:
            update["_meta"] = call.meta()
        updates.append(update)
        return updates

    def _finished(self, event: ToolCallFinished) -> list[SessionUpdate]:
        call = self._call(event.call_id, event.name, event.parent_call_id)
        if event.ui is not None:
            call.ui = event.ui
        if event.terminal_id is not None:
            call.terminal_id = event.terminal_id
        # A subagent's answer is this call's result: its text so far would show it twice.
        call.subagent_text = []
        call.subagent_dirty = False
        updates: list[SessionUpdate] = []
        if call.parent_call_id is not None:
            updates = self._child(call, status=event.status)
            if not call.announced:
                del self.calls[event.call_id]
                return updates
        if self.replaying:
            return [self._replayed(call, event)]
        updates.extend(self._ensure_announced(call))
        call.output = ""
        update = call.update()
        update["status"] = wire_status(event.status)
        update["title"] = call.ui.title
        update["locations"] = locations(call.ui)
        update["content"] = final_content(call, event)
        shown_output = raw_output(event)
        if shown_output is not None:
            update["rawOutput"] = shown_output
        if call.child_session_id is not None:
            update["_meta"] = call.meta()
        updates.append(update)
        # The client keeps the final state; forgetting the call keeps long sessions small.
        del self.calls[event.call_id]
        return updates

    def _replayed(self, call: ToolCall, event: ToolCallFinished) -> SessionUpdate:
        """A replayed call in one message: announced in its final state."""
        update = call.announcement(call.raw_input)
        update["status"] = wire_status(event.status)
        one_diff = bool(call.ui.diffs) and event.status == "completed"
        update["content"] = call.content([] if one_diff else result_blocks(event.result))
        shown_output = raw_output(event)
        if shown_output is not None:
            update["rawOutput"] = shown_output
        del self.calls[event.call_id]
        return update

    # ------------------------------------------------------------------------ compaction

    def _compaction_started(self, event: CompactionStarted) -> list[SessionUpdate]:
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

    def _compaction_finished(self, event: CompactionFinished) -> list[SessionUpdate]:
        if self.client.compaction:
            done: SessionUpdate = {
                "sessionUpdate": "compaction_update",
                "compactionId": event.compaction_id,
                "status": "completed" if event.ok else "failed",
            }
            if event.summary:
                done["summary"] = [text_block(event.summary)]
            if event.error:
                done["error"] = event.error
            return [done]
        text = event.summary if event.ok else (event.error or "compaction failed")
        if event.ok and event.tokens_before is not None and event.tokens_after is not None:
            text = f"{event.tokens_before} → {event.tokens_after} tokens\n\n{text}"
        status: ToolCallStatus = "completed" if event.ok else "failed"
        content = [text_content(text)] if text else []
        call_id = f"compaction-{event.compaction_id}"
        if event.compaction_id in self.compactions:
            self.compactions.discard(event.compaction_id)
            return [
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call_id,
                    "status": status,
                    "content": content,
                }
            ]
        return [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": "Compacted the conversation",
                "kind": "think",
                "status": status,
                "content": content,
            }
        ]
