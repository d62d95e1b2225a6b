"""The methods of a v2 connection, over the same server, sessions and core as v1.

Each handler checks v2's params, calls what serves v1 (the session table, `SessionOpener`, the
session list, the pickers, `LiveSession.prompt`) and answers in v2's shape. What differs in v2:
- `session/prompt` answers as soon as the prompt is in the conversation (`{messageId}`); the
  turn's end is an idle `state_update` with its stop reason (`acp_server.v2.channel`). A prompt
  that fails before it is inserted is answered with the error; one cancelled before, -32800. A
  slash command is answered at once (it is not part of the conversation): it is echoed as a user
  message with an id of its own.
- `session/resume` replays the conversation when asked (`replayFrom: {type: "start"}`, what v1's
  `session/load` does) and sends the session's state before its answer; there is no
  `session/load` or `session/set_mode` (the mode is the `mode` config option).
- `session/close` answers after the idle update of the work it cancelled.
- `tool_call/cancel` and `terminal/cancel` stop a command running in one of the session's own
  terminals (the only calls that advertise `capabilities.cancel`).
- `auth/login` takes no method: earshot's only one runs in a terminal, which v2 clients run
  themselves (`earshot login`); `auth/logout` forgets nothing, as v1's `logout`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, cast

import anyio

from acp_server import params as p
from acp_server.framing import REQUEST_CANCELLED, InvalidParams, Message, RawObject, RpcError
from acp_server.v2 import convert
from acp_server.v2.channel import HeldPrompt, StopReason, V2Channel

if TYPE_CHECKING:
    from acp_server.auth_status import AuthStatus
    from acp_server.jsonrpc import Connection, RequestContext, RequestHandler
    from acp_server.live import LiveSession
    from acp_server.opening import SessionOpener
    from acp_server.ports import SessionMaker
    from acp_server.protocol.common import ContentBlock as V1ContentBlock
    from acp_server.protocol.common import SessionConfigOption as V1ConfigOption
    from acp_server.protocol.v2.common import ContentBlock
    from acp_server.session_table import SessionTable

CLOSE_WAIT_SECONDS = 5.0
"""How long `session/close` waits for the idle update of the work it cancelled."""


class V2Host(Protocol):
    """What the v2 methods use of the server (`acp_server.server.AcpServer`)."""

    @property
    def sessions(self) -> SessionMaker: ...
    @property
    def table(self) -> SessionTable: ...
    @property
    def opener(self) -> SessionOpener: ...
    @property
    def connection(self) -> Connection: ...
    @property
    def auth(self) -> AuthStatus: ...


SAME_AS_V1 = (
    "initialize",
    "session/list",
    "session/delete",
    "providers/list",
    "providers/set",
    "providers/disable",
    "session/set_title",
    "session/status",
    "session/archive",
    "session/unarchive",
    "auth/status",
)
"""Methods whose v1 handler serves v2 as it is: the same params and result."""


class V2Methods:
    """The request handlers of a connection that negotiated v2 (`v1`: the server's v1 handlers,
    some of which serve v2 as they are)."""

    def __init__(self, server: V2Host, v1: Mapping[str, RequestHandler]) -> None:
        self.server = server
        self.v1 = v1

    def handlers(self) -> dict[str, RequestHandler]:
        return {
            **{method: self.v1[method] for method in SAME_AS_V1},
            "auth/login": self.login,
            "auth/logout": self.logout,
            "session/new": self.new,
            "session/resume": self.resume,
            "session/fork": self.fork,
            "session/close": self.close,
            "session/set_config_option": self.set_config_option,
            "session/prompt": self.prompt,
            "tool_call/cancel": self.cancel_tool_call,
            "terminal/cancel": self.cancel_terminal,
        }

    # ------------------------------------------------------------------------- auth

    async def login(self, params: RawObject, context: RequestContext) -> Message:
        method = params.get("methodId")
        raise InvalidParams(
            "methodId",
            f"invalid params: no auth method {method!r} is run through auth/login: earshot's "
            "runs in a terminal (`earshot login`)",
        )

    async def logout(self, params: RawObject, context: RequestContext) -> Message:
        return {}

    # ------------------------------------------------------------------------- sessions

    async def new(self, params: RawObject, context: RequestContext) -> Message:
        request = p.new_session({**params, "mcpServers": params.get("mcpServers") or []})
        answer = await self.server.opener.new(request, context)
        context.after_response.append(self.server.auth.changed)  # the settings were read again
        return {"sessionId": answer["sessionId"], **_setup(cast("Message", answer))}

    async def resume(self, params: RawObject, context: RequestContext) -> Message:
        replay = _replay_from(params)
        opener = self.server.opener
        if replay:  # what v1's `session/load` does
            answer = await opener.load(p.load_session(params), context)
        else:
            answer = await opener.resume(p.resume_session(params), context)
        context.after_response.append(self.server.auth.changed)
        channel = await self._channel(p.close_session(params)["sessionId"])
        await channel.send(channel.foreground.snapshot())
        return _setup(cast("Message", answer))

    async def fork(self, params: RawObject, context: RequestContext) -> Message:
        from acp_server.branches import session_fork

        answer = await session_fork(
            self.server.sessions.store, self.server.opener.resume, params, context
        )
        return {"sessionId": answer["sessionId"], **_setup(answer)}

    async def close(self, params: RawObject, context: RequestContext) -> Message:
        """Cancels the session's work; answered once its idle update was sent."""
        slot = self.server.table.get(p.close_session(params)["sessionId"])
        live = slot.live if slot is not None else None
        answer = await self.v1["session/close"](params, context)
        if live is not None and isinstance(live.channel, V2Channel):
            with anyio.move_on_after(CLOSE_WAIT_SECONDS):
                await live.channel.foreground.idle.wait()
        return answer

    async def set_config_option(self, params: RawObject, context: RequestContext) -> Message:
        request = p.set_config_option(params)
        live = await self.server.table.session(request["sessionId"])
        options = await live.pickers.set_config_option(request["configId"], request["value"])
        return {"configOptions": convert.config_options(options)}

    async def _channel(self, session_id: str) -> V2Channel:
        live = await self.server.table.session(session_id)
        return _v2_channel(live)

    # --------------------------------------------------------------------------- turns

    async def prompt(self, params: RawObject, context: RequestContext) -> Message:
        """Answered once the prompt is in the conversation; the turn runs on in the session's
        block (its end is the session's idle `state_update`). Until then the request's scope
        (`$/cancel_request`, or `session/cancel` on the session) cancels it, -32800, with what it
        started; after, `session/cancel` cancels the turn through the prompt's own scope."""
        from acp_server.live import PromptRun

        request = p.prompt(params)
        slot = self.server.table.slot(request["sessionId"])
        blocks = request["prompt"]
        turn_scope = anyio.CancelScope()
        with slot.prompting(context.scope):
            live = await slot.session()
            channel = _v2_channel(live)
            command = live.command_in(blocks) is not None
            begun: HeldPrompt | None = None
            with anyio.CancelScope(shield=True):  # begun, then surely ended (`run`)
                begun = await channel.foreground.begin(command)
            held = begun
            assert held is not None  # a shielded scope is never cancelled
            ended = anyio.Event()
            outcome: list[StopReason | Exception] = []

            async def run() -> None:
                stop: StopReason = "end_turn"
                failure: RpcError | None = None
                prompt = PromptRun(slot.session, blocks)
                try:
                    with slot.prompting(turn_scope):
                        with turn_scope:
                            await prompt.run()
                        stop = await prompt.answer(cancelled=turn_scope.cancel_called)
                except Exception as exc:
                    from acp_server.errors import map_exception

                    outcome.append(exc)
                    stop = "error"
                    failure = exc if isinstance(exc, RpcError) else map_exception(exc)
                    failure = failure or RpcError(-32603, f"internal error: {type(exc).__name__}")
                else:
                    if stop == "end_turn" and _ended_on_error(channel):
                        stop = "error"
                    outcome.append(stop)
                finally:
                    ended.set()
                    with anyio.CancelScope(shield=True):
                        await channel.foreground.end(held, stop, failure)

            live.tasks.start_soon(run)
            try:
                if command:
                    return await _echo_command(channel, blocks)
                await _first(held.inserted, ended)
            finally:
                if context.scope.cancel_called:  # cancelled before its answer: its work too
                    turn_scope.cancel()
        if held.message_id is not None:
            return {"messageId": held.message_id}
        result = outcome[0] if outcome else "cancelled"
        if isinstance(result, Exception):
            raise result
        if result == "cancelled":
            raise RpcError(REQUEST_CANCELLED, "prompt cancelled before it was inserted")
        # Its turn ended without taking it in: a `user_prompt_submit` hook held it back (the
        # session said why in a notice).
        raise RpcError(-32602, "the prompt was not sent: a hook refused it", {"field": "prompt"})

    async def cancel_tool_call(self, params: RawObject, context: RequestContext) -> Message:
        session_id, call_id = _ids(params, "toolCallId")
        channel = await self._channel(session_id)
        if not channel.cancel_call(call_id):
            raise InvalidParams(
                "toolCallId",
                f"invalid params: tool call {call_id!r} is unknown, finished or not cancellable",
            )
        return {}

    async def cancel_terminal(self, params: RawObject, context: RequestContext) -> Message:
        session_id, terminal_id = _ids(params, "terminalId")
        channel = await self._channel(session_id)
        if channel.terminals is None or not channel.terminals.cancel(terminal_id):
            raise InvalidParams(
                "terminalId",
                f"invalid params: terminal {terminal_id!r} is unknown or has exited",
            )
        return {}


def _v2_channel(live: LiveSession) -> V2Channel:
    channel = live.channel
    assert isinstance(channel, V2Channel), "a session of a v2 connection"
    return channel


def _ended_on_error(channel: V2Channel) -> bool:
    ended = channel.foreground.turn_ended
    return ended is not None and ended.reason == "error"


async def _first(*events: anyio.Event) -> None:
    """Until any of `events` is set."""
    async with anyio.create_task_group() as group:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            group.cancel_scope.cancel()

        for event in events:
            group.start_soon(wait, event)


async def _echo_command(channel: V2Channel, blocks: Sequence[V1ContentBlock]) -> Message:
    """A slash command's answer: it is echoed as the user's message, with an id of its own."""
    import uuid

    message_id = uuid.uuid4().hex
    content = cast("list[ContentBlock]", list(blocks))  # the same blocks in v1 and v2
    await channel.send(
        {"sessionUpdate": "user_message", "messageId": message_id, "content": content}
    )
    return {"messageId": message_id}


def _setup(answer: Message) -> Message:
    """A session's setup answer in v2's shape: its config options (the mode among them)."""
    options = cast("list[V1ConfigOption]", answer.get("configOptions") or [])
    return {"configOptions": convert.config_options(options)}


def _replay_from(params: RawObject) -> bool:
    """Whether `replayFrom` asks for the conversation (`{type: "start"}`); any other cursor is
    refused, as v2 requires, never replaced by another."""
    cursor = params.get("replayFrom")
    if cursor is None:
        return False
    if isinstance(cursor, dict) and cast("RawObject", cursor).get("type") == "start":
        return True
    raise InvalidParams("replayFrom", "invalid params: replayFrom: only {type: start} is supported")


def _ids(params: RawObject, name: str) -> tuple[str, str]:
    session_id = p.close_session(params)["sessionId"]
    value = params.get(name)
    if not isinstance(value, str) or not value:
        raise InvalidParams(name, f"invalid params: {name} must be a non-empty string")
    return session_id, value
