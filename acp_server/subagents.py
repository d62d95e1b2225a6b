"""Subagents as ACP child sessions (unstable), for a client that advertised `subagents`.

Each `task` call's subagent runs in a child session of its own (`agent.session.subagent`); for
such a client the child is exposed the standard way instead of as a list inside the task's card
(`acp_server.tool_calls`, what every other client still gets):
- on the parent session, once the child exists and before anything of it is sent, a
  `subagent_update` announces it: its session id, the task's description as its title, `cancel`
  allowed (`session/cancel` on the child's id cancels its work only: the task call then fails
  saying so, and the parent's turn goes on), state `running`, and in `_meta.earshot` the task
  call it belongs to (`parentToolCallId`; the task call's own `_meta.earshot.childSessionId`
  stays, for every client);
- the task's prompt is a message from the parent to the child: `session_message` (the
  participants, each view naming the other's message) then `session_message_chunk` (its text),
  in the parent's transcript and in the child's;
- the child's own work (text, tool calls, their permission prompts) goes out as the child's
  ordinary updates, on its session id; while the user is asked about one of its calls the child
  is `requires_action`;
- when the task call ends, before its final update, the child is `idle` with why it stopped:
  `end_turn`, `cancelled` (by the client, or with the parent's turn), or `error` (the task's
  error text).
A replay (`session/load`) does the same from the transcript: the child is announced, its prompt
sent, its calls shown as they ended (the parent's record of them: the child's own text is in its
own transcript, `earshot sessions replay <id>`), and it is `idle`. ACP v1's schema (SDK 2.4.0)
has no tool call content of type `session`: the task call is linked through `_meta` only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from acp_server.capabilities import ClientCapabilities
from acp_server.tool_calls import text_block
from acp_server.updates import UpdateTranslator
from agent.events import AgentEvent, ToolCallFinished, ToolCallProgress, ToolCallReady

if TYPE_CHECKING:
    from acp_server.protocol.prompt import SessionUpdate
    from acp_server.protocol.unstable.prompt import (
        SessionUpdateSessionMessage,
        SessionUpdateSessionMessageChunk,
        SessionUpdateSubagentUpdate,
        StateUpdate,
    )

Routed = list[tuple[str | None, "SessionUpdate"]]
"""Updates with the session each goes to (None: the parent, the channel's own)."""


class ChildControl(Protocol):
    """What cancels a child's work (`agent.session.subagent.RunningChildren`)."""

    def cancel(self, child_id: str) -> bool: ...


@dataclass(slots=True)
class _Child:
    session_id: str
    task_call: str
    translator: UpdateTranslator
    cancelled: bool = False


@dataclass(slots=True)
class SubagentView:
    """One parent session's children, as one client is shown them (live, or a replay)."""

    client: ClientCapabilities
    parent: Callable[[], str]
    """The parent's session id (the channel's: known once the session is built)."""
    replaying: bool = False
    control: ChildControl | None = None
    """Cancels a child's work (None: a replay, or nothing to cancel)."""
    _tasks: dict[str, dict[str, Any]] = field(default_factory=lambda: {})
    """A task call's arguments (description, prompt), by its id."""
    _children: dict[str, _Child] = field(default_factory=lambda: {})
    """By task call id, from the child's creation to the task's end."""
    _calls: dict[str, _Child] = field(default_factory=lambda: {})
    """The children's own calls (a permission prompt names one)."""

    def routed(self, event: AgentEvent, translator: UpdateTranslator) -> Routed:
        """The updates `event` becomes: the child's own when it is a child's, else the parent
        translator's with what the children need around them."""
        parent_call = getattr(event, "parent_call_id", None)
        child = self._children.get(parent_call) if isinstance(parent_call, str) else None
        if child is not None:
            call_id = getattr(event, "call_id", None)
            if isinstance(call_id, str):
                self._calls[call_id] = child
            own = dataclasses.replace(cast("Any", event), parent_call_id=None)
            return [(child.session_id, update) for update in child.translator.translate(own)]
        routed: Routed = self._before(event)
        routed.extend((None, update) for update in translator.translate(event))
        routed.extend(self._after(event))
        return routed

    def child_of_call(self, call_id: str) -> tuple[str, UpdateTranslator] | None:
        """The child session (and its translator) a call of a child belongs to."""
        child = self._calls.get(call_id)
        return None if child is None else (child.session_id, child.translator)

    def state(self, child_session: str, state: StateUpdate) -> Routed:
        """A `subagent_update` saying the child's state."""
        return [(None, cast("SessionUpdate", self._update(child_session, state=state)))]

    def cancel(self, child_session: str) -> bool:
        """`session/cancel` on a child: its work only. False when it is none of ours."""
        child = next((c for c in self._children.values() if c.session_id == child_session), None)
        if child is None or self.control is None:
            return False
        child.cancelled = True
        return self.control.cancel(child_session)

    # ---------------------------------------------------------------------------- around

    def _before(self, event: AgentEvent) -> Routed:
        match event:
            case ToolCallReady(name="task", parent_call_id=None):
                arguments = event.arguments
                if isinstance(arguments, dict):
                    self._tasks[event.call_id] = dict(arguments)
            case ToolCallFinished(parent_call_id=None) if event.call_id in self._children:
                child = self._children.pop(event.call_id)
                self._tasks.pop(event.call_id, None)
                self._calls = {k: v for k, v in self._calls.items() if v is not child}
                return self.state(child.session_id, _stopped(child, event))
            case _:
                pass
        return []

    def _after(self, event: AgentEvent) -> Routed:
        match event:
            case ToolCallProgress(child_session_id=str() as session, parent_call_id=None) if (
                event.call_id not in self._children
            ):
                return self._announce(event.call_id, session)
            case _:
                return []

    def _announce(self, task_call: str, session: str) -> Routed:
        translator = UpdateTranslator(client=self.client, replaying=self.replaying)
        child = _Child(session_id=session, task_call=task_call, translator=translator)
        self._children[task_call] = child
        task = self._tasks.get(task_call, {})
        description, prompt = task.get("description"), task.get("prompt")
        announced = self._update(session, state={"state": "running"})
        if isinstance(description, str):
            announced["title"] = description
        announced["capabilities"] = {"cancel": {}}
        announced["_meta"] = {"earshot": {"parentToolCallId": task_call}}
        routed: Routed = [(None, cast("SessionUpdate", announced))]
        if isinstance(prompt, str):
            routed.extend(self._message(child, f"{task_call}-task", prompt))
        return routed

    def _message(self, child: _Child, message_id: str, text: str) -> Routed:
        """The task's prompt, a message from the parent to the child, in both transcripts."""
        parent = self.parent()
        outgoing: SessionUpdateSessionMessage = {
            "sessionUpdate": "session_message",
            "messageId": message_id,
            "senderSessionId": parent,
            "recipientSessionId": child.session_id,
            "recipientMessageId": message_id,
        }
        incoming: SessionUpdateSessionMessage = {
            "sessionUpdate": "session_message",
            "messageId": message_id,
            "senderSessionId": parent,
            "recipientSessionId": child.session_id,
            "senderMessageId": message_id,
        }
        chunk: SessionUpdateSessionMessageChunk = {
            "sessionUpdate": "session_message_chunk",
            "messageId": message_id,
            "content": text_block(text),
        }
        return [
            (None, cast("SessionUpdate", outgoing)),
            (None, cast("SessionUpdate", chunk)),
            (child.session_id, cast("SessionUpdate", incoming)),
            (child.session_id, cast("SessionUpdate", chunk)),
        ]

    @staticmethod
    def _update(session: str, *, state: StateUpdate) -> SessionUpdateSubagentUpdate:
        return {"sessionUpdate": "subagent_update", "sessionId": session, "state": state}


def _stopped(child: _Child, event: ToolCallFinished) -> StateUpdate:
    if event.status == "completed":
        return {"state": "idle", "stopReason": "end_turn"}
    if child.cancelled or event.status == "interrupted":
        return {"state": "idle", "stopReason": "cancelled"}
    text = "".join(getattr(part, "text", "") for part in event.result.content)
    return {
        "state": "idle",
        "stopReason": "error",
        "error": {"code": -32603, "message": text or "the subagent failed"},
    }


__all__ = ["ChildControl", "Routed", "SubagentView"]
