"""The real stdio path, as a process: what loads before the first answers, the end of input,
fd 1, and a person at a terminal (a pty). Everything else drives the server in this process."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from tests.acp_server.client import WAIT_SECONDS, AgentEnv, Json, schema_errors

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX stdio, ptys and signals")

SERVER = [sys.executable, "-m", "earshot", "--stdio"]
BEFORE_INITIALIZE = {
    "earshot",
    "earshot.acp_main",
    "acp_server",
    "acp_server.stdio",
    "acp_server.interrupt",
    "acp_server.first_line",
    "acp_server.initialization",
    "acp_server.capabilities",
    "acp_server.advertised",
    "acp_server.framing",
    "providers",
    "providers.text",
}
"""Every module of ours loaded before the `initialize` reply: it is given before the event loop
(`acp_server.first_line`), by the handshake's own modules (and `earshot.login` for a client
offered terminal sign-in)."""
ZED_INITIALIZE: Json = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "_meta": {"terminal_output": True, "terminal-auth": True},
    },
    "clientInfo": {"name": "zed", "version": "0.200.0"},
}
ZED_INITIALIZE_V2: Json = {
    "protocolVersion": 2,
    "capabilities": {"auth": {"terminal": {}}},
    "info": {"name": "zed", "version": "0.200.0"},
}
OURS = ("earshot", "acp_server", "providers", "sessions", "agent")
NOT_BEFORE_INITIALIZE = (
    "asyncio",
    "anyio",
    "selectors",
    "socket",
    "ssl",
    "threading",
    "concurrent",
    "dataclasses",
    "inspect",
    "pathlib",
    "logging",
    "pydantic",
    "structlog",
    "jsonschema",
    "openai",
    "anthropic",
    "google",
)
"""What the `initialize` reply never waits for: the event loop and what it imports, the
standard library's heavy modules (`dataclasses` imports `inspect`), validation and logging
libraries, vendor SDKs (and, by `BEFORE_INITIALIZE`, the agent, the store, the settings)."""
NOT_BEFORE_SESSION_NEW = (
    "pydantic",
    "structlog",
    "openai",
    "anthropic",
    "google.genai",
    "agent.session.agent_session",
    "agent.turn.loop",
    "sessions.store",
    "acp_server.protocol.common",
    "acp_server.protocol.v2.common",
)
"""What the `session/new` answer never waits for: it is given from the settings, the catalog and
a reserved id, and the session is built after it."""


def request(request_id: int, method: str, params: Json) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return (json.dumps(message) + "\n").encode()


def initialize_line(request_id: int = 1, version: int = 1) -> bytes:
    if version == 2:
        params: Json = {
            "protocolVersion": 2,
            "capabilities": {},
            "info": {"name": "t", "version": "0"},
        }
        return request(request_id, "initialize", params)
    return request(request_id, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})


def new_session_line(env: AgentEnv, request_id: int = 2) -> bytes:
    return request(request_id, "session/new", {"cwd": str(env.workspace), "mcpServers": []})


def run(env: AgentEnv, stdin: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, *args, "-m", "earshot", "--stdio"],
        input=stdin,
        capture_output=True,
        cwd=env.workspace,
        env=env.environ(),
        timeout=WAIT_SECONDS,
        check=False,
    )


def imported(command: list[str], env: AgentEnv) -> list[str]:
    """The modules `command` (run with `-X importtime`) imports."""
    result = subprocess.run(
        command, capture_output=True, env=env.environ(), timeout=WAIT_SECONDS, check=True
    )
    lines = result.stderr.decode().splitlines()
    return [line.rpartition("|")[2].strip() for line in lines if line.startswith("import time:")]


def messages(stdout: bytes) -> list[Json]:
    return [json.loads(line) for line in stdout.decode().splitlines()]


@pytest.mark.parametrize("version", [1, 2])
def test_initialize_is_answered_before_the_event_loop_loads(
    agent_env: AgentEnv, version: int
) -> None:
    # stderr and stdout into one pipe: `-X importtime` lines and answers in the order written.
    agent_env.script([{"text": "unused"}])
    read_end, write_end = os.pipe()
    with subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "earshot", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=write_end,
        stderr=write_end,
        cwd=agent_env.workspace,
        env=agent_env.environ(),
    ) as process:
        os.close(write_end)
        assert process.stdin is not None
        # Zed's, which offers terminal sign-in: the answer checks for a key (`earshot.login`);
        # or its v2 equivalent, answered on the same early path in v2's shape.
        zed = request(1, "initialize", ZED_INITIALIZE if version == 1 else ZED_INITIALIZE_V2)
        process.stdin.write(zed + new_session_line(agent_env))
        process.stdin.close()
        with os.fdopen(read_end, "rb") as combined:
            lines = combined.read().decode().splitlines()
        assert process.wait(timeout=WAIT_SECONDS) == 0
    loaded: list[str] = []
    before: dict[int, list[str]] = {}
    answers: dict[int, Json] = {}
    for line in lines:
        if line.startswith("import time:"):
            loaded.append(line.rpartition("|")[2].strip())
        elif line.startswith("{"):
            message = json.loads(line)
            before[message["id"]] = list(loaded)
            answers[message["id"]] = message
    assert set(before) == {1, 2}, lines[-5:]
    assert answers[1]["result"]["protocolVersion"] == version
    assert "sessionId" in answers[2]["result"]
    ours = {name for name in before[1] if name.partition(".")[0] in OURS}
    assert ours == BEFORE_INITIALIZE | {"earshot.login"}
    # Less what the interpreter loads before any code of ours (the dev venv's editable finder
    # loads pathlib).
    started = imported([sys.executable, "-X", "importtime", "-c", "pass"], agent_env)
    denied = [name for name in before[1] if name.partition(".")[0] in NOT_BEFORE_INITIALIZE]
    assert not set(denied) - set(started)
    # `session/new`, written with `initialize` and read with it, was served after the answer.
    assert not [name for name in NOT_BEFORE_SESSION_NEW if name in before[2]]
    assert "anyio" in before[2]
    assert "agent.session.agent_session" in loaded  # the session was built after its answer


def test_end_of_input_answers_every_request_read_then_exits(agent_env: AgentEnv) -> None:
    # `(printf '<initialize>\n<session/new>\n...') | earshot --stdio`: nothing is dropped.
    agent_env.script([{"text": "never said", "hang": True}])
    session_id_unknown = "01a00000-0000-7000-8000-000000000000"
    stdin = initialize_line() + new_session_line(agent_env)
    stdin += request(3, "session/prompt", {"sessionId": session_id_unknown, "prompt": []})
    stdin += request(4, "logout", {})
    result = run(agent_env, stdin)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    answered = {m["id"]: m for m in messages(result.stdout) if "id" in m and "method" not in m}
    assert set(answered) == {1, 2, 3, 4}
    assert answered[2]["result"]["sessionId"]
    assert answered[3]["error"]["code"] == -32002
    assert answered[4]["result"] == {}
    for message in answered.values():
        if "error" in message:
            assert schema_errors("Error", message["error"]) == []


def test_a_prompt_read_before_the_end_of_input_is_answered_cancelled(agent_env: AgentEnv) -> None:
    agent_env.script([{"text": "never finished", "hang": True}])
    first = run(agent_env, initialize_line() + new_session_line(agent_env))
    [_, created, *_] = messages(first.stdout)
    session_id = created["result"]["sessionId"]
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
    load: Json = {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []}
    stdin = (
        initialize_line() + request(2, "session/load", load) + request(3, "session/prompt", prompt)
    )
    result = run(agent_env, stdin)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    answered = {m["id"]: m for m in messages(result.stdout) if "id" in m and "method" not in m}
    assert answered[3]["result"] == {"stopReason": "cancelled"}


def test_nothing_but_json_rpc_reaches_stdout(agent_env: AgentEnv) -> None:
    # Whatever else writes to fd 1 (a print, a raw write, a child process) lands on stderr.
    code = """
import os
from acp_server import stdio

protect = stdio.protect_stdout

def protect_and_stray() -> int:
    fd = protect()
    print("stray print")
    os.write(1, b"stray write\\n")
    os.system("echo stray child")
    return fd

stdio.protect_stdout = protect_and_stray
from earshot.acp_main import run_stdio

run_stdio()
"""
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=initialize_line(),
        capture_output=True,
        cwd=agent_env.workspace,
        env=agent_env.environ(),
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert result.returncode == 0
    assert [m["id"] for m in messages(result.stdout)] == [1]
    for stray in ("stray print", "stray write", "stray child"):
        assert stray in result.stderr.decode()


# --------------------------------------------------------------------------- a terminal


class Terminal:
    """The server with a pty as its stdin and stderr (a person typing), stdout a pipe."""

    def __init__(self, process: subprocess.Popen[bytes], master: int) -> None:
        self.process = process
        self.master = master
        self.seen = b""

    async def until(self, text: bytes) -> bytes:
        """What the terminal showed, once it shows `text`."""
        with anyio.fail_after(WAIT_SECONDS):
            while text not in self.seen:
                await anyio.wait_readable(self.master)
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:  # EIO: the server closed its end
                    break
        assert text in self.seen, self.seen
        return self.seen

    def type(self, data: bytes) -> None:
        os.write(self.master, data)

    async def answers(self, count: int) -> list[Json]:
        """The first `count` messages the server wrote on stdout (a pipe), once written."""
        assert self.process.stdout is not None
        out = self.process.stdout.fileno()
        data = b""
        with anyio.fail_after(WAIT_SECONDS):
            while data.count(b"\n") < count:
                await anyio.wait_readable(out)
                chunk = os.read(out, 65536)
                assert chunk, f"stdout closed after {data!r}"
                data += chunk
        return messages(data)

    async def exit_status(self) -> int:
        with anyio.fail_after(WAIT_SECONDS):
            while self.process.poll() is None:
                await anyio.wait_readable(self.master)
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:
                    break
        return self.process.wait(timeout=WAIT_SECONDS)


@contextmanager
def at_a_terminal(env: AgentEnv) -> Generator[Terminal]:
    master, slave = pty.openpty()
    try:
        with subprocess.Popen(
            SERVER,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=slave,
            cwd=env.workspace,
            env=env.environ(),
        ) as process:
            os.close(slave)
            slave = -1
            try:
                yield Terminal(process, master)
            finally:
                if process.poll() is None:
                    process.kill()
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)


async def test_at_a_terminal_it_says_what_it_is_and_logs_plain_lines(agent_env: AgentEnv) -> None:
    agent_env.script([])
    with at_a_terminal(agent_env) as terminal:
        shown = await terminal.until(b"Ctrl-D to end.")
        [banner] = [line for line in shown.decode().splitlines() if "earshot" in line]
        assert "Agent Client Protocol" in banner
        assert '"method":"initialize"' in banner
        terminal.type(b'{"jsonrpc": "2.0", "method": "_nobody/knows", "params": {}}\n')
        logged = (await terminal.until(b"ignored notification")).decode()
        [line] = [line for line in logged.splitlines() if "ignored notification" in line]
        assert not line.lstrip().startswith("{")  # not JSON, which looks like a message
        assert "_nobody/knows" in line
        terminal.type(b"\x04")  # Ctrl-D: the end of input
        assert await terminal.exit_status() == 0
        assert terminal.process.stdout is not None
        assert terminal.process.stdout.read() == b""  # nothing was asked


async def test_ctrl_c_before_initialize_ends_it_quietly(agent_env: AgentEnv) -> None:
    agent_env.script([])
    with at_a_terminal(agent_env) as terminal:
        await terminal.until(b"Ctrl-D to end.")
        terminal.process.send_signal(signal.SIGINT)  # what Ctrl-C sends
        assert await terminal.exit_status() == 130
        assert b"Traceback" not in terminal.seen
        assert b"KeyboardInterrupt" not in terminal.seen


async def test_sigterm_while_the_first_line_is_awaited_ends_it(agent_env: AgentEnv) -> None:
    # Before the loop runs, nothing is open: the signal's default action, as it always was.
    agent_env.script([])
    with at_a_terminal(agent_env) as terminal:
        await terminal.until(b"Ctrl-D to end.")  # printed just before the first line is read
        terminal.process.send_signal(signal.SIGTERM)
        assert await terminal.exit_status() == -signal.SIGTERM
        assert b"Traceback" not in terminal.seen


async def test_ctrl_c_with_a_session_open_ends_it_quietly(agent_env: AgentEnv) -> None:
    agent_env.script([])
    with at_a_terminal(agent_env) as terminal:
        await terminal.until(b"Ctrl-D to end.")
        terminal.type(initialize_line() + new_session_line(agent_env))
        answered = await terminal.answers(2)
        assert [m["id"] for m in answered if "result" in m] == [1, 2]
        terminal.process.send_signal(signal.SIGINT)
        assert await terminal.exit_status() == 130
        assert b"Traceback" not in terminal.seen
        assert b"KeyboardInterrupt" not in terminal.seen


def test_logs_are_json_lines_when_not_on_a_terminal(agent_env: AgentEnv) -> None:
    agent_env.script([])
    notification = b'{"jsonrpc": "2.0", "method": "_nobody/knows", "params": {}}\n'
    result = run(agent_env, initialize_line() + notification)
    [line] = [line for line in result.stderr.decode().splitlines() if "ignored" in line]
    assert json.loads(line)["event"] == "ignored notification"


def test_a_log_file_gets_json_lines(agent_env: AgentEnv, tmp_path: Path) -> None:
    agent_env.script([])
    agent_env.extra_env["EARSHOT_LOG_FILE"] = str(tmp_path / "earshot.log")
    notification = b'{"jsonrpc": "2.0", "method": "_nobody/knows", "params": {}}\n'
    result = run(agent_env, initialize_line() + notification)
    assert result.returncode == 0
    [line] = (tmp_path / "earshot.log").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["method"] == "_nobody/knows"
