"""A small ACP client for the tests: spawns the real server (`python -m earshot --stdio`), plays the
editor, and validates EVERY message the server writes against the official ACP schema.

Validation lives here so no test can forget it: a message that fails (or a line that is not JSON)
is recorded, and leaving the `AcpClient` context raises if anything was recorded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol, cast

import anyio
import anyio.abc
from anyio.streams.text import TextReceiveStream
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = ROOT / "acp_server" / "schema" / "schema.json"
"""The official ACP v1 schema, vendored with its source and licence in acp_server/schema/."""
WAIT_SECONDS = 10.0

Json = dict[str, Any]
RequestHandler = Callable[["AcpClient", Json], Awaitable[Any]]
"""Answers one agent->client request: called with the client and the request's `params`."""


UNSTABLE_SCHEMA_PATH = SCHEMA_PATH.with_name("schema.unstable.json")
"""The unstable methods we offer (`session/fork`) validate against this one."""


@cache
def _schema(path: Path = SCHEMA_PATH) -> Json:
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _validator(definition: str, path: Path = SCHEMA_PATH) -> Draft202012Validator:
    defs = _schema(path)["$defs"]
    assert definition in defs, definition
    return Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{definition}"})


UNSTABLE_METHODS = frozenset({"session/fork"})


@cache
def _method_types() -> dict[tuple[str, str], str]:
    """(x-method, kind) -> $defs name, kind in request|response|notification (agent side view);
    the unstable methods we offer come from the unstable schema."""
    types = _method_types_of(SCHEMA_PATH)
    for key, name in _method_types_of(UNSTABLE_SCHEMA_PATH).items():
        if key[0] in UNSTABLE_METHODS:
            types[key] = name
    return types


def _method_types_of(path: Path) -> dict[tuple[str, str], str]:
    types: dict[tuple[str, str], str] = {}
    for name, definition in _schema(path)["$defs"].items():
        method = definition.get("x-method")
        if method is None:
            continue
        side = definition.get("x-side")
        if name.endswith("Response") and side == "agent":
            types[(method, "response")] = name
        elif name.endswith("Request") and side == "client":
            types[(method, "request")] = name
        elif name.endswith("Notification") and side in ("client", "protocol"):
            types[(method, "notification")] = name
    return types


class _ErrorIterator(Protocol):
    """The one validator method used here; the stubs also overload `iter_errors` with a
    deprecated two-argument form whose parameter is untyped, which strict mode rejects."""

    def iter_errors(self, instance: Any) -> Iterator[ValidationError]: ...


def schema_errors(definition: str, value: Any, path: Path = SCHEMA_PATH) -> list[str]:
    validator = cast(_ErrorIterator, _validator(definition, path))
    return [
        f"{definition} at /{'/'.join(str(p) for p in error.absolute_path)}: {error.message}"
        for error in validator.iter_errors(value)
    ]


def json_list(value: Any) -> list[Any]:
    """A JSON array field that may be absent or null (`None`), as a list."""
    return cast(list[Any], value or [])


class ClientFailure(AssertionError):
    pass


@dataclass
class Terminal:
    process: anyio.abc.Process
    output: bytearray = field(default_factory=bytearray)
    limit: int | None = None
    exit_code: int | None = None
    signal: str | None = None
    exited: anyio.Event = field(default_factory=anyio.Event)
    released: bool = False


class AcpClient:
    """Drive the server. Create with `spawn_agent`."""

    def __init__(self, process: anyio.abc.Process, task_group: anyio.abc.TaskGroup) -> None:
        self.process = process
        self.task_group = task_group
        self.violations: list[str] = []
        self.messages: list[Json] = []
        """Every message the server wrote, in order."""
        self.raw_lines: list[str] = []
        self._next_id = 0
        self._pending: dict[Any, tuple[str, anyio.Event, list[Json]]] = {}
        self._changed = anyio.Event()
        self.handlers: dict[str, RequestHandler] = {}
        self.agent_requests: list[Json] = []
        self.cancel_requests: list[Any] = []
        self.terminals: dict[str, Terminal] = {}
        self.files_written: dict[str, str] = {}
        self.closed = False
        self.stderr_path: Path | None = None
        self.stderr = ""

    # ------------------------------------------------------------------------ reading

    async def read_output(self) -> None:
        """Consume the server's stdout until EOF, recording and validating each line."""
        assert self.process.stdout is not None
        buffer = ""
        async for chunk in TextReceiveStream(self.process.stdout):
            buffer += chunk
            while "\n" in buffer:
                line, buffer = buffer.split("\n", 1)
                self._line(line)
        if buffer:
            self.violations.append(f"unterminated output at EOF: {buffer[:200]!r}")
        self.closed = True
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _line(self, line: str) -> None:
        self.raw_lines.append(line)
        try:
            decoded: object = json.loads(line)
        except ValueError:
            self.violations.append(f"not JSON on stdout: {line[:200]!r}")
            return
        if not isinstance(decoded, dict):
            self.violations.append(f"not a JSON-RPC 2.0 object: {line[:200]!r}")
            return
        message = cast(Json, decoded)
        if message.get("jsonrpc") != "2.0":
            self.violations.append(f"not a JSON-RPC 2.0 object: {line[:200]!r}")
            return
        self.messages.append(message)
        if "method" in message and "id" in message:
            self._validate(message, (message["method"], "request"), message.get("params"))
            self.agent_requests.append(message)
            self.task_group.start_soon(self._answer, message)
        elif "method" in message:
            method = message["method"]
            self._validate(message, (method, "notification"), message.get("params"))
            if method == "$/cancel_request":
                self.cancel_requests.append(message["params"]["requestId"])
        else:
            pending = self._pending.get(message.get("id"))
            if "error" in message:
                self.violations.extend(schema_errors("Error", message["error"]))
            elif pending is None:
                self.violations.append(f"response to an unknown id: {line[:200]!r}")
            else:
                self._validate(message, (pending[0], "response"), message.get("result"))
            if pending is not None:
                pending[2].append(message)
                pending[1].set()
        self._notify()

    def _validate(self, message: Json, key: tuple[str, str], value: Any) -> None:
        definition = _method_types().get(key)
        if definition is None:
            self.violations.append(f"unexpected {key[1]} {key[0]!r}: {json.dumps(message)[:200]}")
            return
        path = UNSTABLE_SCHEMA_PATH if key[0] in UNSTABLE_METHODS else SCHEMA_PATH
        for error in schema_errors(definition, value, path):
            self.violations.append(f"{error} in {json.dumps(message)[:300]}")

    # ------------------------------------------------------------------------ writing

    async def send(self, message: Json | str | bytes) -> None:
        """Write one message (a dict), or raw text/bytes for hostile-input tests."""
        assert self.process.stdin is not None
        if isinstance(message, dict):
            data = (json.dumps(message) + "\n").encode()
        elif isinstance(message, str):
            data = message.encode()
        else:
            data = message
        await self.process.stdin.send(data)

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def start_request(
        self, method: str, params: Json | list[Any] | None = None, *, request_id: Any = None
    ) -> Any:
        """Send a request without waiting; returns its id (see `response`). `params` may be an
        array only to test how the server rejects one."""
        request_id = self._new_id() if request_id is None else request_id
        self._pending[request_id] = (method, anyio.Event(), [])
        message: Json = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return request_id

    async def start_together(self, *requests: tuple[str, Json]) -> list[int]:
        """Send several requests in ONE write (as a client that pipelines them); their ids."""
        lines: list[str] = []
        ids: list[int] = []
        for method, params in requests:
            request_id = self._new_id()
            self._pending[request_id] = (method, anyio.Event(), [])
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            lines.append(json.dumps(message) + "\n")
            ids.append(request_id)
        await self.send("".join(lines))
        return ids

    async def response(self, request_id: Any) -> Json:
        """The full response message (result or error) to one of our requests."""
        _, done, box = self._pending[request_id]
        with anyio.fail_after(WAIT_SECONDS):
            await done.wait()
        return box[0]

    async def call(self, method: str, params: Json | None = None) -> Json:
        """A request whose result is expected; raises on an error response."""
        response = await self.response(await self.start_request(method, params))
        if "error" in response:
            raise ClientFailure(f"{method} failed: {response['error']}")
        return response["result"]

    async def error(self, method: str, params: Json | None = None) -> Json:
        """A request whose error is expected."""
        response = await self.response(await self.start_request(method, params))
        assert "error" in response, response
        return response["error"]

    async def notify(self, method: str, params: Json) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    # --------------------------------------------------------------------- observing

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = WAIT_SECONDS) -> Any:
        with anyio.fail_after(timeout):
            while True:
                value = predicate()
                if value:
                    return value
                if self.closed:
                    raise ClientFailure("the server closed its output while we were waiting")
                await self._changed.wait()

    def updates(self, session_id: str | None = None) -> list[Json]:
        return [
            message["params"]["update"]
            for message in self.messages
            if message.get("method") == "session/update"
            and (session_id is None or message["params"]["sessionId"] == session_id)
        ]

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [update["sessionUpdate"] for update in self.updates(session_id)]

    def text(self, session_id: str | None = None, kind: str = "agent_message_chunk") -> str:
        return "".join(
            update["content"].get("text", "")
            for update in self.updates(session_id)
            if update["sessionUpdate"] == kind
        )

    def requests_named(self, method: str) -> list[Json]:
        return [request for request in self.agent_requests if request["method"] == method]

    # -------------------------------------------------------------- answering requests

    async def _answer(self, message: Json) -> None:
        method = message["method"]
        handler = self.handlers.get(method) or _DEFAULT_HANDLERS.get(method)
        reply: Json = {"jsonrpc": "2.0", "id": message["id"]}
        if handler is None:
            reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
        else:
            try:
                reply["result"] = await handler(self, message["params"])
            except ClientError as exc:
                reply["error"] = {"code": exc.code, "message": str(exc)}
        if not self.closed:
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self.send(reply)

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()


class ClientError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


# ------------------------------------------------------------------- default handlers


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
    env = dict(os.environ)
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


async def _pump_terminal(terminal: Terminal) -> None:
    assert terminal.process.stdout is not None
    try:
        async for chunk in terminal.process.stdout:
            terminal.output += chunk
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass
    code = await terminal.process.wait()
    if code < 0:
        import signal

        terminal.signal = signal.Signals(-code).name
    else:
        terminal.exit_code = code
    terminal.exited.set()


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


async def terminal_kill(client: AcpClient, params: Json) -> Json:
    _kill(_terminal(client, params))
    return {}


async def terminal_release(client: AcpClient, params: Json) -> Json:
    terminal = _terminal(client, params)
    _kill(terminal)
    terminal.released = True
    return {}


_DEFAULT_HANDLERS: dict[str, RequestHandler] = {
    "session/request_permission": allow_once,
    "fs/read_text_file": read_text_file,
    "fs/write_text_file": write_text_file,
    "terminal/create": terminal_create,
    "terminal/wait_for_exit": terminal_wait,
    "terminal/output": terminal_output,
    "terminal/kill": terminal_kill,
    "terminal/release": terminal_release,
}


# ----------------------------------------------------------------------- environment


@dataclass
class AgentEnv:
    """Temp XDG dirs, a workspace, and the scripted model selected by the user settings."""

    root: Path
    workspace: Path
    config_home: Path
    data_home: Path
    extra_env: dict[str, str] = field(default_factory=lambda: {})

    @property
    def settings_path(self) -> Path:
        return self.config_home / "earshot" / "settings.json"

    def write_settings(self, settings: Json) -> None:
        self.settings_path.parent.mkdir(parents=True, exist_ok=True)
        self.settings_path.write_text(json.dumps(settings), encoding="utf-8")

    def script(
        self,
        turns: list[Json],
        *,
        models: Json | None = None,
        mode: str | None = None,
        extra: Json | None = None,
    ) -> Path:
        """Select the scripted model playing `turns` (each process starts the script afresh)."""
        path = self.root / "script.json"
        path.write_text(json.dumps({"turns": turns}), encoding="utf-8")
        settings: Json = {
            "providers": {"scripted-test": {"api": "scripted", "script": str(path)}},
            "model": "scripted-test/anything",
        }
        if models is not None:
            settings["models"] = models
        if mode is not None:
            settings["mode"] = mode
        settings.update(extra or {})
        self.write_settings(settings)
        return path

    def environ(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.endswith(("_API_KEY", "_TOKEN")) and not key.startswith("EARSHOT_")
        }
        env.update(
            {
                "XDG_CONFIG_HOME": str(self.config_home),
                "XDG_DATA_HOME": str(self.data_home),
                "HOME": str(self.root / "home"),
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update(self.extra_env)
        return env


def make_env(tmp_path: Path) -> AgentEnv:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (tmp_path / "home").mkdir()
    return AgentEnv(
        root=tmp_path,
        workspace=workspace.resolve(),
        config_home=tmp_path / "config",
        data_home=tmp_path / "data",
    )


FULL_CAPABILITIES: Json = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
}


@asynccontextmanager
async def spawn_agent(env: AgentEnv, *, check: bool = True) -> AsyncGenerator[AcpClient]:
    """Run the server; on exit close its stdin, wait for it to exit, and fail on any schema
    violation (`check=False` leaves the violations to the test)."""
    stderr_path = env.root / f"stderr-{os.urandom(3).hex()}.log"
    client: AcpClient | None = None
    with stderr_path.open("wb") as stderr:
        process = await anyio.open_process(
            [sys.executable, "-m", "earshot", "--stdio"],
            cwd=env.workspace,
            env=env.environ(),
            stderr=stderr,
        )
        try:
            async with anyio.create_task_group() as task_group:
                client = AcpClient(process, task_group)
                client.stderr_path = stderr_path
                task_group.start_soon(client.read_output)
                try:
                    yield client
                    if process.returncode is None:
                        await client.close_stdin()
                    with anyio.fail_after(WAIT_SECONDS):
                        await process.wait()
                finally:
                    task_group.cancel_scope.cancel()
        finally:
            if process.returncode is None:
                process.kill()
                with anyio.CancelScope(shield=True):
                    await process.wait()
    # Only None if spawning failed, and then the exception is already on its way out.
    assert client is not None
    log = stderr_path.read_text(encoding="utf-8", errors="replace")
    if check and client.violations:
        raise ClientFailure(
            "schema violations:\n"
            + "\n".join(client.violations)
            + f"\n--- stderr ---\n{log[-3000:]}"
        )
    client.stderr = log


async def initialize(client: AcpClient, capabilities: Mapping[str, Any] | None = None) -> Json:
    return await client.call(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": dict(capabilities or {}),
            "clientInfo": {"name": "earshot-tests", "version": "0"},
        },
    )
