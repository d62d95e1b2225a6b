"""The editor side of the test client: how it answers the agent's requests (permission prompts,
files, terminals it really runs), unless a test sets its own handler."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

if TYPE_CHECKING:
    from tests.acp_server.client import AcpClient

Json = dict[str, Any]
RequestHandler = Callable[["AcpClient", Json], Awaitable[Any]]
"""Answers one agent->client request: called with the client and the request's `params`."""


@dataclass
class Terminal:
    process: anyio.abc.Process
    output: bytearray = field(default_factory=bytearray)
    limit: int | None = None
    exit_code: int | None = None
    signal: str | None = None
    exited: anyio.Event = field(default_factory=anyio.Event)
    released: bool = False


class ClientError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


async def allow_once(client: AcpClient, params: Json) -> Json:
    option = next(o for o in params["options"] if o["kind"] == "allow_once")
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


async def read_text_file(client: AcpClient, params: Json) -> Json:
    path = Path(params["path"])
    if not path.exists():
        raise ClientError(-32002, f"file not found: {path}")
    return {"content": path.read_text(encoding="utf-8")}


async def write_text_file(client: AcpClient, params: Json) -> Json:
    Path(params["path"]).write_text(params["content"], encoding="utf-8")
    client.files_written[params["path"]] = params["content"]
    return {}


async def terminal_create(client: AcpClient, params: Json) -> Json:
    command = [params["command"], *params.get("args", [])]
    env = dict(client.environ)
    env.update({item["name"]: item["value"] for item in params.get("env", [])})
    process = await anyio.open_process(
        command,
        cwd=params.get("cwd"),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    terminal_id = f"term-{len(client.terminals) + 1}"
    terminal = Terminal(process=process, limit=params.get("outputByteLimit"))
    client.terminals[terminal_id] = terminal
    client.task_group.start_soon(_pump_terminal, terminal)
    return {"terminalId": terminal_id}


DRAIN_SECONDS = 2.0
"""How long output is still read once the command has exited (what it wrote before exiting is
in the pipe already); a process that escaped its group may hold the pipe open for longer."""


async def _pump_terminal(terminal: Terminal) -> None:
    """Collect the output; the terminal has exited when its command has (as an editor learns it,
    from the process, not from the end of its output: a killed sandbox's child may still hold
    the pipe for a moment)."""
    read_all = anyio.Event()
    code = 0
    async with anyio.create_task_group() as group:
        group.start_soon(_read_terminal, terminal, read_all)
        code = await terminal.process.wait()
        with anyio.move_on_after(DRAIN_SECONDS):
            await read_all.wait()
        group.cancel_scope.cancel()
    if code < 0:
        import signal

        terminal.signal = signal.Signals(-code).name
    else:
        terminal.exit_code = code
    terminal.exited.set()


async def _read_terminal(terminal: Terminal, read_all: anyio.Event) -> None:
    assert terminal.process.stdout is not None
    try:
        async for chunk in terminal.process.stdout:
            terminal.output += chunk
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass
    read_all.set()


def _terminal(client: AcpClient, params: Json) -> Terminal:
    terminal = client.terminals.get(params["terminalId"])
    if terminal is None or terminal.released:
        raise ClientError(-32002, "unknown terminal")
    return terminal


def _exit_status(terminal: Terminal) -> Json:
    return {"exitCode": terminal.exit_code, "signal": terminal.signal}


async def terminal_wait(client: AcpClient, params: Json) -> Json:
    terminal = _terminal(client, params)
    await terminal.exited.wait()
    return _exit_status(terminal)


async def terminal_output(client: AcpClient, params: Json) -> Json:
    terminal = _terminal(client, params)
    data = bytes(terminal.output)
    truncated = terminal.limit is not None and len(data) > terminal.limit
    if truncated:
        data = data[-(terminal.limit or 0) :]
    result: Json = {"output": data.decode("utf-8", "replace"), "truncated": truncated}
    if terminal.exited.is_set():
        result["exitStatus"] = _exit_status(terminal)
    return result


def _kill(terminal: Terminal) -> None:
    import signal

    if not terminal.exited.is_set():
        with suppress(ProcessLookupError):
            os.killpg(terminal.process.pid, signal.SIGKILL)


async def close_terminals(client: AcpClient) -> None:
    """Kill and reap every terminal still running (the test is over): a process object dropped
    unreaped warns when it is collected, in whichever test runs then."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(10):
        for terminal in client.terminals.values():
            _kill(terminal)
            await terminal.process.aclose()


async def terminal_kill(client: AcpClient, params: Json) -> Json:
    _kill(_terminal(client, params))
    return {}


async def terminal_release(client: AcpClient, params: Json) -> Json:
    terminal = _terminal(client, params)
    _kill(terminal)
    terminal.released = True
    return {}


DEFAULT_HANDLERS: dict[str, RequestHandler] = {
    "session/request_permission": allow_once,
    "fs/read_text_file": read_text_file,
    "fs/write_text_file": write_text_file,
    "terminal/create": terminal_create,
    "terminal/wait_for_exit": terminal_wait,
    "terminal/output": terminal_output,
    "terminal/kill": terminal_kill,
    "terminal/release": terminal_release,
}
