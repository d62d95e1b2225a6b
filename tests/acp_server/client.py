"""A small ACP client for the tests: plays the editor and validates EVERY message the server
writes against the official ACP schema.

It drives the server one of two ways:
- `open_agent`: in this process, over a socketpair into the same `Connection` the real server
  uses (as the MCP SDK's tests use memory streams): the server's whole protocol path, without
  a process start (most tests);
- `spawn_agent`: the real `python -m earshot --stdio` process, for what only a process has
  (start-up, fd 1, end of input and exit, signals, two processes on one session).

Validation lives here so no test can forget it: a message that fails (or a line that is not JSON)
is recorded, and leaving either context raises if anything was recorded.
"""

from __future__ import annotations

import io
import json
import os
import socket
import sys
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Callable,
    Generator,
    Iterator,
    Mapping,
)
from contextlib import asynccontextmanager, contextmanager, suppress
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import anyio
import anyio.abc
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from tests.acp_server.editor import (
    DEFAULT_HANDLERS,
    ClientError,
    RequestHandler,
    Terminal,
    close_terminals,
)
from tests.acp_server.env import FULL_CAPABILITIES as FULL_CAPABILITIES
from tests.acp_server.env import AgentEnv as AgentEnv
from tests.acp_server.env import make_env as make_env

if TYPE_CHECKING:
    from acp_server.ports import Ports

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = ROOT / "acp_server" / "schema" / "schema.json"
"""The official ACP v1 schema, vendored with its source and licence in acp_server/schema/."""
UNSTABLE_SCHEMA_PATH = SCHEMA_PATH.with_name("schema.unstable.json")
"""The unstable methods we offer (`providers/*`) are validated against it: `unstable:<Name>`."""
V2_SCHEMA_DIR = SCHEMA_PATH.parent / "v2"
"""The ACP v2 draft's schemas: a client that negotiated v2 (`AcpClient.protocol`) validates
every message against these instead (`v2:<Name>`, `v2:unstable:<Name>`)."""
UNSTABLE = "unstable:"
V2 = "v2:"
WAIT_SECONDS = 30.0
"""How long a test waits for what it expects: generous, since it only bounds a failure (a
loaded machine must not turn a pass into one)."""

Json = dict[str, Any]


@cache
def _schema(v2: bool = False) -> Json:
    path = V2_SCHEMA_DIR / "schema.json" if v2 else SCHEMA_PATH
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _unstable_schema(v2: bool = False) -> Json:
    path = V2_SCHEMA_DIR / "schema.unstable.json" if v2 else UNSTABLE_SCHEMA_PATH
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _validator(definition: str) -> Draft202012Validator:
    v2 = definition.startswith(V2)
    definition = definition.removeprefix(V2)
    unstable = definition.startswith(UNSTABLE)
    definition = definition.removeprefix(UNSTABLE)
    defs = (_unstable_schema(v2) if unstable else _schema(v2))["$defs"]
    assert definition in defs, definition
    return Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{definition}"})


@cache
def method_types(protocol: int = 1) -> dict[tuple[str, str], str]:
    """(x-method, kind) -> $defs name, kind in request|response|notification (agent side view),
    for the protocol version the client speaks (v2's names carry the `v2:` prefix)."""
    types: dict[tuple[str, str], str] = {}
    version = V2 if protocol == 2 else ""
    schemas = (
        (version, _schema(protocol == 2)),
        (version + UNSTABLE, _unstable_schema(protocol == 2)),
    )
    for prefix, schema in schemas:
        for name, definition in schema["$defs"].items():
            method = definition.get("x-method")
            stable = prefix == version
            if method is None or (method, "response") in types and not stable:
                continue
            side = definition.get("x-side")
            if name.endswith("Response") and side == "agent" and (method, "response") not in types:
                types[(method, "response")] = prefix + name
            elif name.endswith("Request") and side == "client" and stable:
                types[(method, "request")] = prefix + name
            elif name.endswith("Notification") and side in ("client", "protocol") and stable:
                types[(method, "notification")] = prefix + name
    return types


@cache
def _unstable_method_types(protocol: int = 1) -> dict[tuple[str, str], str]:
    """As `method_types`, every type from the version's `schema.unstable.json`: what a client
    that opted in to unstable features (`AcpClient.unstable`) is validated against."""
    types: dict[tuple[str, str], str] = {}
    prefix = (V2 if protocol == 2 else "") + UNSTABLE
    for name, definition in _unstable_schema(protocol == 2)["$defs"].items():
        method = definition.get("x-method")
        side = definition.get("x-side")
        if method is None:
            continue
        if name.endswith("Response") and side == "agent":
            types[(method, "response")] = prefix + name
        elif name.endswith("Request") and side == "client":
            types[(method, "request")] = prefix + name
        elif name.endswith("Notification") and side in ("client", "protocol"):
            types[(method, "notification")] = prefix + name
    return types


class _ErrorIterator(Protocol):
    """The one validator method used here; the stubs also overload `iter_errors` with a
    deprecated two-argument form whose parameter is untyped, which strict mode rejects."""

    def iter_errors(self, instance: Any) -> Iterator[ValidationError]: ...


def schema_errors(definition: str, value: Any) -> list[str]:
    validator = cast(_ErrorIterator, _validator(definition))
    return [
        f"{definition} at /{'/'.join(str(p) for p in error.absolute_path)}: {error.message}"
        for error in validator.iter_errors(value)
    ]


def json_list(value: Any) -> list[Any]:
    """A JSON array field that may be absent or null (`None`), as a list."""
    return cast(list[Any], value or [])


class ClientFailure(AssertionError):
    pass


class Transport(Protocol):
    """The client's end of the server's stdin/stdout."""

    async def send(self, data: bytes) -> None: ...

    def receive(self) -> AsyncIterable[bytes]: ...

    async def close_input(self) -> None:
        """Close the server's input (its stdin reaches EOF)."""
        ...


class ProcessTransport:
    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    def receive(self) -> AsyncIterable[bytes]:
        assert self.process.stdout is not None
        return self.process.stdout

    async def close_input(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()


class SocketTransport:
    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self.stream = stream

    async def send(self, data: bytes) -> None:
        await self.stream.send(data)

    async def receive(self) -> AsyncGenerator[bytes]:
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            while True:
                yield await self.stream.receive()

    async def close_input(self) -> None:
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await self.stream.send_eof()


class AcpClient:
    """Drive the server. Create with `open_agent` (in process) or `spawn_agent` (a process)."""

    def __init__(self, transport: Transport, task_group: anyio.abc.TaskGroup) -> None:
        self.transport = transport
        self.task_group = task_group
        self.violations: list[str] = []
        self.protocol = 1
        """The ACP version the client speaks: what the server's messages are validated against
        (`initialize_v2` sets 2 before asking for it)."""
        self.messages: list[Json] = []
        """Every message the server wrote, in order."""
        self.raw_lines: list[str] = []
        self._next_id = 0
        self.input_closed = False
        self._sending = anyio.Lock()
        """One message at a time: answers to the server's requests are sent from their own
        tasks, while the test sends its own."""
        self._pending: dict[Any, tuple[str, anyio.Event, list[Json]]] = {}
        self._changed = anyio.Event()
        self.handlers: dict[str, RequestHandler] = {}
        self.agent_requests: list[Json] = []
        self.cancel_requests: list[Any] = []
        self.terminals: dict[str, Terminal] = {}
        self.files_written: dict[str, str] = {}
        self.closed = False
        self.stderr = ""
        """What the server logged (its stderr, or the log of a server in this process)."""
        self.server_done = anyio.Event()
        """Set when the server has stopped (the process exited, or `serve` returned)."""
        self.environ = dict(os.environ)
        """The editor's own environment (what its terminals inherit)."""
        self.unstable = False
        """The client opted in to unstable features (a capability of `schema.unstable.json`):
        every message is validated against that schema instead of the stable one, where an
        unstable update or notification would be a violation."""

    @property
    def process(self) -> anyio.abc.Process:
        """The server process (`spawn_agent` only)."""
        assert isinstance(self.transport, ProcessTransport), "a server in this process"
        return self.transport.process

    # ------------------------------------------------------------------------ reading

    async def read_output(self) -> None:
        """Consume the server's stdout until EOF, recording and validating each line."""
        buffer = b""
        async for chunk in self.transport.receive():
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                self._line(line.decode("utf-8", "replace"))
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
                error_type = V2 + "Error" if self.protocol == 2 else "Error"
                self.violations.extend(schema_errors(error_type, message["error"]))
            elif pending is None:
                self.violations.append(f"response to an unknown id: {line[:200]!r}")
            else:
                self._validate(message, (pending[0], "response"), message.get("result"))
            if pending is not None:
                pending[2].append(message)
                pending[1].set()
        self._notify()

    def _validate(self, message: Json, key: tuple[str, str], value: Any) -> None:
        types = (
            _unstable_method_types(self.protocol) if self.unstable else method_types(self.protocol)
        )
        definition = types.get(key)
        if definition is None:
            self.violations.append(f"unexpected {key[1]} {key[0]!r}: {json.dumps(message)[:200]}")
            return
        for error in schema_errors(definition, value):
            self.violations.append(f"{error} in {json.dumps(message)[:300]}")

    # ------------------------------------------------------------------------ writing

    async def send(self, message: Json | str | bytes) -> None:
        """Write one message (a dict), or raw text/bytes for hostile-input tests."""
        if isinstance(message, dict):
            data = (json.dumps(message) + "\n").encode()
        elif isinstance(message, str):
            data = message.encode()
        else:
            data = message
        async with self._sending:
            if self.input_closed:
                # As a pipe the editor closed: nothing more reaches the server.
                raise anyio.ClosedResourceError
            await self.transport.send(data)

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
        handler = self.handlers.get(method) or DEFAULT_HANDLERS.get(method)
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
        async with self._sending:  # after a message being written, before any other
            self.input_closed = True
            await self.transport.close_input()

    async def stopped(self) -> None:
        """Until the server has stopped (after the end of its input, it answers what it read
        first)."""
        with anyio.fail_after(WAIT_SECONDS):
            await self.server_done.wait()


def _raise_violations(client: AcpClient, log: str) -> None:
    if client.violations:
        raise ClientFailure(
            "schema violations:\n"
            + "\n".join(client.violations)
            + f"\n--- server log ---\n{log[-3000:]}"
        )


@asynccontextmanager
async def spawn_agent(env: AgentEnv, *, check: bool = True) -> AsyncGenerator[AcpClient]:
    """Run the server as a process (`python -m earshot --stdio`); on exit close its stdin, wait
    for it to exit, and fail on any schema violation (`check=False` leaves the violations to the
    test). `client.process` is the process."""
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
                client = AcpClient(ProcessTransport(process), task_group)

                async def exited() -> None:
                    await process.wait()
                    assert client is not None
                    client.server_done.set()

                task_group.start_soon(client.read_output)
                task_group.start_soon(exited)
                try:
                    yield client
                    if process.returncode is None:
                        await client.close_stdin()
                    with anyio.fail_after(WAIT_SECONDS):
                        await process.wait()
                finally:
                    await close_terminals(client)
                    task_group.cancel_scope.cancel()
        finally:
            if process.returncode is None:
                process.kill()
                with anyio.CancelScope(shield=True):
                    await process.wait()
    # Only None if spawning failed, and then the exception is already on its way out.
    assert client is not None
    log = stderr_path.read_text(encoding="utf-8", errors="replace")
    if check:
        _raise_violations(client, log)
    client.stderr = log


@contextmanager
def _environment(environ: Mapping[str, str]) -> Generator[None]:
    """The process environment replaced for a server in this process (what its settings, data
    dir, HOME and tools see), restored after."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@asynccontextmanager
async def open_agent(
    env: AgentEnv,
    *,
    check: bool = True,
    ports: Callable[[dict[str, str]], Ports] | None = None,
) -> AsyncGenerator[AcpClient]:
    """Run the server in this process, over a socketpair: the transport, the server and the
    agent are the real ones, only the process around them is not. On exit close its input, wait
    for it to stop, and fail on any schema violation (`check=False` leaves them to the test).
    Everything the server logs (its own events, the agent's) is `client.stderr` afterwards.
    `ports` makes the server's ports from the environment (default: earshot's own)."""
    if env.over_websocket:
        from tests.acp_server.websocket_client import open_agent_over_websocket

        async with open_agent_over_websocket(env, check=check, ports=ports) as client:
            yield client
        return
    from acp_server.log import log, log_to
    from acp_server.server import AcpServer, ServerLimits
    from earshot import __version__
    from earshot.acp_main import earshot_ports

    environ = env.environ()
    editor_environ = dict(os.environ)
    logged = io.StringIO()
    server_end, client_end = socket.socketpair()
    client: AcpClient | None = None
    stream = await anyio.abc.SocketStream.from_socket(client_end)  # it owns `client_end`
    with _environment(environ), server_end:
        log_to(logged)
        server = AcpServer(
            ports=ports(environ) if ports else earshot_ports(environ=environ),
            version=__version__,
            log=log,
            limits=ServerLimits.from_environ(environ),
        )
        async with stream, anyio.create_task_group() as task_group:
            client = AcpClient(SocketTransport(stream), task_group)
            client.environ = editor_environ

            async def serve() -> None:
                assert client is not None
                try:
                    await server.serve(read_fd=server_end.fileno(), write_fd=server_end.fileno())
                finally:
                    with suppress(OSError):
                        server_end.shutdown(socket.SHUT_WR)
                    client.server_done.set()

            task_group.start_soon(serve)
            task_group.start_soon(client.read_output)
            try:
                yield client
                await client.close_stdin()
                await client.stopped()
                await client.wait_for(lambda: client.closed)
            finally:
                await close_terminals(client)
                task_group.cancel_scope.cancel()
    assert client is not None
    client.stderr = logged.getvalue()
    if check:
        _raise_violations(client, client.stderr)


UNSTABLE_CAPABILITIES = frozenset({"plan", "subagents"})
"""Client capabilities only `schema.unstable.json` has."""


async def initialize(
    client: AcpClient,
    capabilities: Mapping[str, Any] | None = None,
    *,
    unstable: bool | None = None,
) -> Json:
    """`initialize`; a client advertising an unstable capability (or `unstable=True`) is then
    validated against `schema.unstable.json` (`AcpClient.unstable`)."""
    client.unstable = (
        bool(UNSTABLE_CAPABILITIES & set(capabilities or {})) if unstable is None else unstable
    )
    return await client.call(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": dict(capabilities or {}),
            "clientInfo": {"name": "earshot-tests", "version": "0"},
        },
    )


async def initialize_v2(
    client: AcpClient, capabilities: Mapping[str, Any] | None = None, *, unstable: bool = False
) -> Json:
    """Ask for ACP v2: from here on every message is validated against the v2 schemas (the
    unstable one with `unstable`)."""
    client.protocol = 2
    client.unstable = unstable
    return await client.call(
        "initialize",
        {
            "protocolVersion": 2,
            "capabilities": dict(capabilities or {}),
            "info": {"name": "earshot-tests", "version": "0"},
        },
    )
