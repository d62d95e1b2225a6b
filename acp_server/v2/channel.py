"""A v2 session's connection: the same translation of the core's events as v1, sent in v2's
shapes, and the session's foreground state.

`V2Channel` is a `SessionChannel` whose `update` takes what the server's v1 translation makes
(`acp_server.updates`, the pickers, the command list, replay) and sends it as v2 says it
(`acp_server.v2.convert`): nothing above the channel knows which version it speaks. What v2 adds
comes from here:
- every message chunk names its message (a chunk v1 sends without an id, a command's answer or a
  warning, gets one of its own, kept for its run of chunks);
- the prompt is echoed whole (`user_message`, with the id the prompt's answer gives);
- a call running in one of the session's own terminals (`OwnTerminals`) can be cancelled by the
  client (`capabilities.cancel`, then `tool_call/cancel`), and ends `cancelled` when it was;
- `state_update`: `running` from the first prompt received to the end of the last (`idle`, with
  its stop reason), `requires_action` while the turn waits on the user (a permission prompt, a
  question), and a snapshot on `session/resume` (`Foreground`).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, assert_never, cast

import anyio

from acp_server.client_io import SessionChannel
from acp_server.framing import AUTH_REQUIRED, Message, RpcError
from acp_server.updates import UpdateTranslator, message_chunk
from acp_server.v2 import convert
from acp_server.v2.terminals import OwnTerminals
from agent.events import AgentEvent, TurnEnded, UserMessageAdded

if TYPE_CHECKING:
    from acp_server.capabilities import ClientCapabilities, ClientLearned
    from acp_server.jsonrpc import Connection
    from acp_server.protocol.prompt import SessionUpdate as V1Update
    from acp_server.protocol.v2.common import (
        ContentBlock,
        JsonObject,
        ToolCallContent,
        ToolCallUpdate,
    )
    from acp_server.protocol.v2.prompt import Error, SessionUpdate
    from agent.backends import ProcessBackend

MODEL_FAILED = -32005
"""Server-defined, in an idle `state_update`'s `error` (`stopReason: "error"`): the model call
that ended the turn failed (`data.kind`: auth, rate_limit, context_overflow, ...); its sentence
was also sent as agent text, as in v1. A provider without credentials is -32000."""

_ASKING = ("session/request_permission", "elicitation/create")
"""Requests that block the turn on the user (`requires_action` while they are open)."""
_FINAL = ("completed", "failed", "cancelled")

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"]


@dataclass(slots=True, eq=False)
class HeldPrompt:
    """A prompt from its request until its turn (or command) has ended."""

    command: bool
    """A slash command: answered at once (it is not inserted into the conversation), but it
    stays held until it ends, so that a prompt its turn inserts is not taken for a later one."""
    message_id: str | None = None
    inserted: anyio.Event = field(default_factory=anyio.Event)


class Foreground:
    """The session's foreground work as v2 reports it (`state_update`), and which prompt each
    inserted user message was: prompts are inserted in the order they were received (a turn
    takes its prompt first; prompts queued into a turn are inserted as `queued`, in order)."""

    def __init__(self, send: Callable[[SessionUpdate], Awaitable[None]]) -> None:
        self._send = send
        self._held: list[HeldPrompt] = []
        self._asking = 0
        self.state: Literal["idle", "running", "requires_action"] = "idle"
        self.turn_ended: TurnEnded | None = None
        """How the last turn ended (its error, for the idle update)."""
        self.idle = anyio.Event()
        self.idle.set()

    async def begin(self, command: bool) -> HeldPrompt:
        """A prompt was received: foreground work runs until it and every other have ended."""
        held = HeldPrompt(command=command)
        self._held.append(held)
        if self.state == "idle":
            self.idle = anyio.Event()
            await self._set("running")
        return held

    def inserted(self, event: UserMessageAdded) -> None:
        """A user message entered the conversation: the earliest prompt it can be."""
        for held in self._held:
            if held.message_id is None and not (event.queued and held.command):
                held.message_id = event.entry_id
                held.inserted.set()
                return

    async def end(self, held: HeldPrompt, stop: StopReason, failure: RpcError | None) -> None:
        """`held`'s turn (or command) ended; the last to end makes the session idle."""
        self._held.remove(held)
        if self._held:
            return
        self._asking = 0
        update = idle_update(stop, failure or self._turn_error(stop))
        self.turn_ended = None
        self.state = "idle"
        await self._send(update)
        self.idle.set()

    def _turn_error(self, stop: StopReason) -> RpcError | None:
        ended = self.turn_ended
        if stop != "error" or ended is None or ended.reason != "error":
            return None
        message = ended.message or (ended.error.message if ended.error else "the model failed")
        kind = ended.error.kind if ended.error else "unknown"
        code = AUTH_REQUIRED if kind == "auth" else MODEL_FAILED
        return RpcError(code, message, {"kind": kind})

    async def asking(self) -> None:
        self._asking += 1
        if self.state == "running":
            await self._set("requires_action")

    async def answered(self) -> None:
        self._asking = max(0, self._asking - 1)
        if self._asking == 0 and self.state == "requires_action":
            await self._set("running")

    async def _set(self, state: Literal["running", "requires_action"]) -> None:
        self.state = state
        await self._send({"sessionUpdate": "state_update", "state": state})

    def snapshot(self) -> SessionUpdate:
        """The state as it is (`session/resume` sends it after any replay)."""
        match self.state:
            case "idle":
                return {"sessionUpdate": "state_update", "state": "idle"}
            case "running" | "requires_action":
                return {"sessionUpdate": "state_update", "state": self.state}
            case _:
                assert_never(self.state)


def idle_update(stop: StopReason, failure: RpcError | None) -> SessionUpdate:
    if stop == "error" or failure is not None:
        error: Error = (
            {"code": failure.code, "message": failure.message}
            if failure
            else {
                "code": MODEL_FAILED,
                "message": "the turn failed",
            }
        )
        if failure is not None and failure.data is not None:
            error["data"] = cast("JsonObject", failure.data)
        return {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "error",
            "error": error,
        }
    return cast(
        "SessionUpdate", {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop}
    )


class V2Translator(UpdateTranslator):
    """v1's translator, which also tells the channel of the prompt's insertion (echoed whole in
    v2) and of each turn's end."""

    __slots__ = ("foreground",)

    def __init__(self, client: ClientCapabilities, foreground: Foreground) -> None:
        super().__init__(client=client)
        self.foreground = foreground

    def translate(self, event: AgentEvent) -> list[V1Update]:
        updates = UpdateTranslator.translate(self, event)
        match event:
            case UserMessageAdded():
                self.foreground.inserted(event)
                echo = message_chunk("user_message_chunk", event.text, event.entry_id)
                return [echo, *updates]
            case TurnEnded():
                self.foreground.turn_ended = event
            case _:
                pass
        return updates


class V2Channel(SessionChannel):
    """`SessionChannel` for a v2 client: v1's updates sent in v2's shapes (`update`), v2's own
    sent as they are (`send`)."""

    def __init__(
        self, connection: Connection, client: ClientCapabilities, learned: ClientLearned
    ) -> None:
        super().__init__(connection, client, learned)
        self.foreground = Foreground(self.send)
        self.translator = V2Translator(client, self.foreground)
        self.terminals: OwnTerminals | None = None
        self._minted: dict[str, str] = {}
        """Message ids given to the current run of id-less chunks, by kind."""
        self._call_terminals: dict[str, str] = {}
        """Call -> the terminal it runs in, while it can be cancelled."""
        self.cancelled_calls: set[str] = set()
        """Calls the client cancelled (`tool_call/cancel`): they end `cancelled`."""

    def processes(self, local: ProcessBackend) -> ProcessBackend:
        self.terminals = OwnTerminals(self.send, local)
        return self.terminals

    async def send(self, update: SessionUpdate) -> None:
        await self.connection.notify(
            "session/update", {"sessionId": self.session_id, "update": update}
        )

    async def update(self, update: V1Update, session_id: str | None = None) -> None:
        # `session_id` is only ever a subagent's, which a v2 client is not offered
        # (`ClientCapabilities.of_v2`: no `subagents`): the session's own.
        for converted in self._converted(update):
            await self.send(converted)

    async def _send(self, method: str, params: Message) -> Any:
        if method == "session/request_permission":
            params = convert.permission_params(params)
        if method not in _ASKING:
            return await super()._send(method, params)
        await self.foreground.asking()
        try:
            return await super()._send(method, params)
        finally:
            with anyio.CancelScope(shield=True):
                await self.foreground.answered()

    def cancel_call(self, call_id: str) -> bool:
        """`tool_call/cancel`: stop the command the call runs; False when it cannot be."""
        terminal_id = self._call_terminals.get(call_id)
        if terminal_id is None or self.terminals is None:
            return False
        if not self.terminals.cancel(terminal_id):
            return False
        self.cancelled_calls.add(call_id)
        return True

    # ---------------------------------------------------------------------- conversion

    def _converted(self, update: V1Update) -> list[SessionUpdate]:
        kind = update["sessionUpdate"]
        if kind not in ("agent_message_chunk", "agent_thought_chunk") or "messageId" in update:
            self._minted.clear()
        match update["sessionUpdate"]:
            case "agent_message_chunk" | "agent_thought_chunk":
                message_id = update.get("messageId") or self._minted.setdefault(
                    update["sessionUpdate"], _new_id()
                )
                return [{**update, "messageId": message_id}]  # pyright: ignore[reportReturnType]
            case "user_message_chunk":
                blocks = [cast("ContentBlock", update["content"])]
                message_id = update.get("messageId") or _new_id()
                return [
                    {"sessionUpdate": "user_message", "messageId": message_id, "content": blocks}
                ]
            case "tool_call" | "tool_call_update":
                return [self._tool_call(cast("Message", update))]
            case "plan":
                return [convert.plan(update["entries"])]
            case "available_commands_update":
                commands = convert.commands(update["availableCommands"])
                return [
                    {"sessionUpdate": "available_commands_update", "availableCommands": commands}
                ]
            case "config_option_update":
                options = convert.config_options(update["configOptions"])
                return [{"sessionUpdate": "config_option_update", "configOptions": options}]
            case "current_mode_update":
                return []  # the `mode` config option says it (v2 has no modes)
            case (
                "session_info_update"
                | "usage_update"
                | "notice"
                | "compaction_update"
                | "compaction_summary_chunk"
            ):
                return [cast("SessionUpdate", update)]  # the same in v2
            case _:
                # An update kind added to v1's translation since (an unstable one): sent as it
                # is until its v2 shape is written here.
                return [cast("SessionUpdate", update)]

    def _tool_call(self, fields: Message) -> SessionUpdate:
        call = convert.tool_call(fields)
        call_id = call["toolCallId"]
        content = call.get("content")
        if content is not None:
            call["content"] = [
                item
                for item in content
                if item["type"] != "terminal" or self._terminal_known(cast("Message", item))
            ]
            if self._learn_terminal(call_id, content):
                call["capabilities"] = {"cancel": {}}
        if call.get("status") in _FINAL:
            if self._call_terminals.pop(call_id, None) is not None:
                call["capabilities"] = None
            if call_id in self.cancelled_calls:
                self.cancelled_calls.discard(call_id)
                call["status"] = "cancelled"
        return _tagged(call)

    def _terminal_known(self, item: Message) -> bool:
        """A terminal of this session's (a replayed call may name one of an earlier process,
        or of an editor: the client never saw it)."""
        return self.terminals is not None and item.get("terminalId") in self.terminals.known

    def _learn_terminal(self, call_id: str, content: list[ToolCallContent]) -> bool:
        """Whether the call has just been seen running in one of the session's terminals (it
        can be cancelled from now until its final update)."""
        if self.terminals is None or call_id in self._call_terminals:
            return False
        for item in content:
            if item["type"] == "terminal":
                terminal_id = cast("Message", item).get("terminalId")
                if isinstance(terminal_id, str) and self.terminals.running(terminal_id):
                    self._call_terminals[call_id] = terminal_id
                    return True
        return False


def _tagged(call: ToolCallUpdate) -> SessionUpdate:
    return {"sessionUpdate": "tool_call_update", **call}


def _new_id() -> str:
    return uuid.uuid4().hex
