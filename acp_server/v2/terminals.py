"""A v2 session's commands: run locally (`agent.local`, in the session's sandbox as any local
command), each in a terminal of earshot's own that the client is shown live.

v2 has no client terminal: the agent owns its terminals and reports them with `terminal_update`
(created with its command and cwd, then exited with its exit status) and `terminal_output_chunk`
(the output bytes, base64). The call that runs the command shows the terminal in its content
(the `bash` tool's `on_terminal`, as an editor terminal is shown in v1). A running terminal can
be stopped by the client (`terminal/cancel`, and `tool_call/cancel` on its call): its process
group gets SIGTERM (then SIGKILL), and the call gets what it printed until then, killed by
SIGTERM. Background commands (`bash` with `background: true`) run locally and are read with
`bash_output`, as without an editor terminal in v1.
"""

from __future__ import annotations

import base64
import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from agent.backends import (
    Confinement,
    OutputSink,
    ProcessBackend,
    ProcessResult,
    TerminalSink,
)

if TYPE_CHECKING:
    from pathlib import Path

    from acp_server.protocol.v2.prompt import SessionUpdate, TerminalExitStatus

Send = Callable[["SessionUpdate"], Awaitable[None]]

_SEND_SECONDS = 5.0
"""How long saying a terminal exited may take once the command was cancelled."""


@dataclass(slots=True)
class _Tail:
    """The last `limit` characters of a command's output (what the call gets back when the
    client stopped it: the local backend's own copy is lost with its cancellation)."""

    limit: int
    parts: list[str] = field(default_factory=lambda: [])
    size: int = 0
    dropped: bool = False

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > 2 * self.limit:
            self._trim()

    def _trim(self) -> None:
        text = "".join(self.parts)
        self.dropped = self.dropped or len(text) > self.limit
        text = text[-self.limit :] if self.limit > 0 else ""
        self.parts, self.size = [text], len(text)

    def text(self) -> str:
        self._trim()
        return "".join(self.parts)


class OwnTerminals:
    """The session's process backend in v2 (`SessionChannel.processes`)."""

    def __init__(self, send: Send, local: ProcessBackend) -> None:
        self._send = send
        self.local = local
        self._running: dict[str, anyio.CancelScope] = {}
        self.known: set[str] = set()
        """Every terminal this session announced (a tool call may name only these)."""

    def running(self, terminal_id: str) -> bool:
        return terminal_id in self._running

    def cancel(self, terminal_id: str) -> bool:
        """Stop a running terminal's command (`terminal/cancel`); False when it is not running.
        Its `terminal_update` with the exit status follows once the process has ended."""
        scope = self._running.get(terminal_id)
        if scope is None:
            return False
        scope.cancel()
        return True

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        timeout: float,
        output_limit: int,
        env: Mapping[str, str] | None = None,
        on_output: OutputSink | None = None,
        on_terminal: TerminalSink | None = None,
        confine: Confinement | None = None,
    ) -> ProcessResult:
        del on_output  # the output goes to the terminal, which the call shows
        terminal_id = f"term-{uuid.uuid4().hex[:12]}"
        tail = _Tail(output_limit)

        async def output(text: str) -> None:
            tail.add(text)
            data = base64.b64encode(text.encode("utf-8", "replace")).decode("ascii")
            await self._send(
                {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": data}
            )

        await self._send(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": terminal_id,
                "command": command,
                "cwd": str(cwd),
                "capabilities": {"cancel": {}},
            }
        )
        self.known.add(terminal_id)
        result: ProcessResult | None = None
        with anyio.CancelScope() as stop:
            self._running[terminal_id] = stop
            try:
                if on_terminal is not None:
                    await on_terminal(terminal_id)
                result = await self.local.run(
                    command,
                    cwd=cwd,
                    timeout=timeout,
                    output_limit=output_limit,
                    env=env,
                    on_output=output,
                    confine=confine,
                )
            finally:
                del self._running[terminal_id]
                with anyio.CancelScope(shield=True), anyio.move_on_after(_SEND_SECONDS):
                    await self._send(_exited(terminal_id, result, stopped=stop.cancel_called))
        if result is None:  # stopped by the client: the group was sent SIGTERM
            result = ProcessResult(
                exit_code=None, output=tail.text(), truncated=tail.dropped, signal="SIGTERM"
            )
        return dataclasses.replace(result, terminal_id=terminal_id)


def _exited(terminal_id: str, result: ProcessResult | None, *, stopped: bool) -> SessionUpdate:
    """The terminal's exit: its status when the command ended, a signal when the client stopped
    it, an empty status (exited, how unknown) when the turn was cancelled under it."""
    status: TerminalExitStatus = {}
    if result is not None:
        status = {"exitCode": result.exit_code, "signal": result.signal}
    elif stopped:
        status = {"signal": "SIGTERM"}
    return {
        "sessionUpdate": "terminal_update",
        "terminalId": terminal_id,
        "exitStatus": status,
        "capabilities": None,
    }
