"""Background commands in editor terminals (`agent.local.background`): `terminal/create` without the
wait, `terminal/output` for each read, `terminal/kill` to stop, `terminal/release` when the
session closes, so the terminal embedded in the `bash` call stays visible until then."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import anyio

from acp_server.answers import InvalidAnswer
from acp_server.framing import RawObject as JsonObject
from acp_server.outgoing import ClientError, ConnectionClosed
from agent.local import READ_LIMIT, JobOutput

if TYPE_CHECKING:
    from acp_server.answers import ClientRequest


class TerminalChannel(Protocol):
    """What a terminal asks of `acp_server.client_io.SessionChannel`: requests to the client for
    one session."""

    @property
    def request(self) -> ClientRequest: ...


_CLEANUP_SECONDS: Final = 5.0
_OVERLAP: Final = 256
"""Characters of the previous output looked for in a truncated one, to find where new starts."""


class TerminalCommand:
    """A command left running in an editor terminal (`agent.local.background.RunningCommand`)."""

    def __init__(self, channel: TerminalChannel, terminal_id: str) -> None:
        self._channel = channel
        self.terminal_id: str | None = terminal_id
        self.pid: int | None = None
        self._seen = ""
        """The terminal's output at the previous read."""
        self._ids: JsonObject = {"terminalId": terminal_id}

    @classmethod
    async def create(
        cls, channel: TerminalChannel, argv: Sequence[str], *, cwd: Path, output_limit: int
    ) -> TerminalCommand:
        params: JsonObject = {
            "command": argv[0],
            "args": list(argv[1:]),
            "cwd": str(cwd),
            "outputByteLimit": max(0, output_limit),
        }
        try:
            created = await channel.request("terminal/create", params)
        except InvalidAnswer as exc:
            raise OSError(f"the editor did not create a terminal: {exc.message}") from exc
        return cls(channel, created["terminalId"])

    async def read(self) -> JobOutput:
        answer = await self._channel.request("terminal/output", self._ids)
        output = answer["output"]
        new, dropped = _new_part(self._seen, output, truncated=answer["truncated"])
        self._seen = output
        if len(new) > READ_LIMIT:
            dropped += len(new) - READ_LIMIT
            new = new[-READ_LIMIT:]
        status = answer.get("exitStatus")
        if status is None:
            return JobOutput(text=new, running=True, dropped=dropped)
        return JobOutput(
            text=new,
            running=False,
            exit_code=status.get("exitCode"),
            signal=status.get("signal"),
            dropped=dropped,
        )

    async def kill(self) -> None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLEANUP_SECONDS):
            await self._channel.request("terminal/kill", self._ids)
            # Gone when kill returns in most editors; wait for the exit to be sure.
            await self._channel.request("terminal/wait_for_exit", self._ids)

    async def release(self) -> None:
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(_CLEANUP_SECONDS),
            contextlib.suppress(ClientError, ConnectionClosed),
        ):
            await self._channel.request("terminal/release", self._ids)


def _new_part(seen: str, output: str, *, truncated: bool) -> tuple[str, int]:
    """What `output` adds to `seen` (the previous read's output), and how many characters of
    new output could not be told apart (a terminal that dropped its beginning)."""
    if output.startswith(seen):
        return output[len(seen) :], 0
    if truncated and seen:
        tail = seen[-_OVERLAP:]
        at = output.rfind(tail)
        if at >= 0:
            return output[at + len(tail) :], 0
    return output, 0
