"""One language server process: start, `initialize`, keep documents in sync, get diagnostics.

Messages are built and read with `lsprotocol`'s types and its cattrs converter (the protocol's
own generated model, so field names and enums are right by construction); the transport is
`agent.lsp.jsonrpc`. Both load with the first server a session starts, never before.

Diagnostics come one of two ways, whichever the server offers:

- pull (`textDocument/diagnostic`, LSP 3.17), when the server announces a `diagnosticProvider`:
  a request, so the answer is for exactly the text just sent;
- push (`textDocument/publishDiagnostics`): the client announces `versionSupport`, and waits for
  a publication carrying the version it just sent (or, from a server that sends no versions,
  the first publication after it).

Either wait is bounded (`ServerConfig.timeout`); a server that does not answer in time, or
stops, raises `ServerProblem`, whose message says which and includes the end of its stderr.
Documents are always sent whole: simple, and what every server accepts.

The process runs with earshot's environment minus the provider keys (`agent.tool_env`), in the
session's command sandbox when one is given (`agent.backends.Confinement`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

import anyio
from anyio.abc import Process, TaskGroup

from agent.lsp.jsonrpc import Json, JsonRpcConnection, ResponseError, ServerClosed
from agent.tool_env import tool_environment

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from agent.backends import Confinement
    from agent.settings import LspServerSettings

STDERR_KEPT: Final = 4_000
"""Characters of a server's stderr kept for the report when it fails."""
SHUTDOWN_TIMEOUT: Final = 2.0


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """A language server as the settings describe it (`lsp.<name>`)."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    """File suffixes it checks, with the dot (`.py`)."""
    language_id: str = ""
    """LSP `languageId` for `didOpen`; empty: derived from the suffix (`language_id_for`)."""
    initialization_options: Json = None
    timeout: float = 10.0
    """Seconds to wait for a document's diagnostics."""
    startup_timeout: float = 30.0
    """Seconds for the process to answer `initialize`."""


class ServerProblem(Exception):
    """The server could not start, stopped, or did not answer in time. The message is for the
    model and the user."""


_LANGUAGE_IDS: Final = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".jsx": "javascriptreact",
    ".ts": "typescript", ".tsx": "typescriptreact", ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp", ".hpp": "cpp", ".rb": "ruby",
    ".cs": "csharp", ".php": "php", ".lua": "lua", ".swift": "swift", ".kt": "kotlin",
}  # fmt: skip


def server_configs(entries: Mapping[str, LspServerSettings]) -> list[ServerConfig]:
    """The `lsp` settings entries (`CodeConfig.lsp`) as `ServerConfig`s."""
    servers: list[ServerConfig] = []
    for name, entry in entries.items():
        config = ServerConfig(
            name=name,
            command=entry.command,
            args=tuple(entry.args),
            extensions=tuple(suffix.lower() for suffix in entry.extensions),
            language_id=entry.language_id or "",
            initialization_options=cast("Json", entry.initialization_options),
        )
        if entry.timeout is not None:
            config = replace(config, timeout=entry.timeout)
        servers.append(config)
    return servers


def language_id_for(config: ServerConfig, path: Path) -> str:
    return config.language_id or _LANGUAGE_IDS.get(path.suffix.lower(), path.suffix.lstrip("."))


class LanguageServer:
    """A running server (see the module docstring). `start` it in a task group that outlives
    it; `close` it before the group ends."""

    def __init__(
        self,
        config: ServerConfig,
        root: Path,
        *,
        confinement: Confinement | None = None,
        environment: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.root = root
        self._confinement = confinement
        self._environment = environment
        self._process: Process | None = None
        self._connection: JsonRpcConnection | None = None
        self._stack = contextlib.AsyncExitStack()
        self._stderr = ""
        self._pull = False
        self._documents: dict[str, tuple[int, str]] = {}
        """uri -> (version, text) as last sent."""
        self._published: dict[str, tuple[int | None, list[lsp.Diagnostic], int]] = {}
        """uri -> (version, diagnostics, sequence number) of the last publication."""
        self._sequence = 0
        self._sent_at = 0
        self._publication = anyio.Event()
        self.lock = anyio.Lock()
        """Held around one edit's exchange (`agent.lsp.manager`)."""

    # ------------------------------------------------------------------ lifecycle

    async def start(self, group: TaskGroup) -> None:
        """Spawn the server and complete the `initialize` handshake.

        Raises:
            ServerProblem: it could not be spawned, or did not initialize in time.
        """
        from lsprotocol import types as lsp

        from agent.lsp.protocol import initialize_params

        argv = [self.config.command, *self.config.args]
        try:
            if self._confinement is not None:
                argv = list(
                    await self._stack.enter_async_context(
                        self._confinement.launch(argv, cwd=self.root, scrub_env=False)
                    )
                )
            process = await anyio.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.root,
                env=tool_environment(self._environment),
                start_new_session=True,
            )
        except OSError as error:
            await self._stack.aclose()
            raise ServerProblem(
                f"the {self.config.name} language server could not start "
                f"(`{self.config.command}`: {error.strerror or error})"
            ) from None
        self._process = process
        assert process.stdin is not None and process.stdout is not None
        connection = JsonRpcConnection(
            process.stdin,
            process.stdout,
            on_notification=self._notification,
            on_request=self._request,
        )
        self._connection = connection
        group.start_soon(self._read, connection)
        group.start_soon(self._drain_stderr)
        try:
            raw = await connection.request(
                lsp.INITIALIZE,
                initialize_params(self.root, self.config.initialization_options),
                timeout=self.config.startup_timeout,
            )
            self._pull = _offers_pull(raw)
            await connection.notify(lsp.INITIALIZED, {})
        except (ServerClosed, ResponseError, TimeoutError) as error:
            await self.close()
            raise self._problem(error, "starting") from None
        except BaseException:  # cancelled while starting: no process may outlive this
            await self.close()
            raise

    async def close(self) -> None:
        """Ask the server to shut down (bounded), then make sure the process is gone."""
        from lsprotocol import types as lsp

        connection, process = self._connection, self._process
        with anyio.CancelScope(shield=True):
            if connection is not None and connection.closed is None:
                with contextlib.suppress(ServerClosed, ResponseError, TimeoutError):
                    await connection.request(lsp.SHUTDOWN, None, timeout=SHUTDOWN_TIMEOUT)
                    await connection.notify(lsp.EXIT, None)
            if process is not None:
                if process.stdin is not None:  # end of input: every server's cue to exit
                    with contextlib.suppress(OSError, anyio.BrokenResourceError):
                        await process.stdin.aclose()
                with anyio.move_on_after(SHUTDOWN_TIMEOUT):
                    await process.wait()
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(process.pid, 9)
                    process.kill()
                    await process.wait()
                await process.aclose()
            await self._stack.aclose()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def running(self) -> bool:
        return (
            self._connection is not None
            and self._connection.closed is None
            and self._process is not None
            and self._process.returncode is None
        )

    # ------------------------------------------------------------------ documents

    def sent_text(self, path: Path) -> str | None:
        """The text the server last got for `path` (None: not open)."""
        document = self._documents.get(path.as_uri())
        return None if document is None else document[1]

    async def diagnostics(self, path: Path, text: str) -> list[lsp.Diagnostic]:
        """Send `text` as the content of `path` and return the server's diagnostics for it.

        Raises:
            ServerProblem: the server stopped, or did not answer within the timeout.
        """
        from lsprotocol import types as lsp

        from agent.lsp.protocol import converter, pulled_diagnostics

        connection = self._connection
        if connection is None:
            raise ServerProblem(f"the {self.config.name} language server is not running")
        uri = path.as_uri()
        try:
            version = await self._sync(connection, path, uri, text)
            if self._pull:
                raw = await connection.request(
                    lsp.TEXT_DOCUMENT_DIAGNOSTIC,
                    converter().unstructure(
                        lsp.DocumentDiagnosticParams(
                            text_document=lsp.TextDocumentIdentifier(uri=uri)
                        )
                    ),
                    timeout=self.config.timeout,
                )
                return pulled_diagnostics(raw)
            return await self._published_for(uri, version)
        except (ServerClosed, ResponseError, TimeoutError) as error:
            raise self._problem(error, "checking the edit") from None

    async def _sync(self, connection: JsonRpcConnection, path: Path, uri: str, text: str) -> int:
        from lsprotocol import types as lsp

        from agent.lsp.protocol import converter

        unstructure = converter().unstructure
        current = self._documents.get(uri)
        if current is None:
            version = 1
            params = lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(
                    uri=uri,
                    language_id=language_id_for(self.config, path),
                    version=version,
                    text=text,
                )
            )
            self._mark_sent(uri, version, text)
            await connection.notify(lsp.TEXT_DOCUMENT_DID_OPEN, unstructure(params))
            return version
        version = current[0] + 1
        change = lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
        self._mark_sent(uri, version, text)
        await connection.notify(lsp.TEXT_DOCUMENT_DID_CHANGE, unstructure(change))
        return version

    def _mark_sent(self, uri: str, version: int, text: str) -> None:
        self._documents[uri] = (version, text)
        self._sent_at = self._sequence

    async def _published_for(self, uri: str, version: int) -> list[lsp.Diagnostic]:
        """The first publication for `uri` at `version` (or, unversioned, after the send)."""
        sent_at = self._sent_at
        with anyio.fail_after(self.config.timeout):
            while True:
                published = self._published.get(uri)
                if published is not None:
                    published_version, diagnostics, sequence = published
                    if published_version == version or (
                        published_version is None and sequence > sent_at
                    ):
                        return diagnostics
                if self._connection is not None and self._connection.closed is not None:
                    raise self._connection.closed
                await self._publication.wait()

    # ------------------------------------------------------------------ from the server

    async def _notification(self, method: str, params: Json) -> None:
        from lsprotocol import types as lsp

        from agent.lsp.protocol import converter

        if method != lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            return
        try:
            published = converter().structure(params, lsp.PublishDiagnosticsParams)
        except Exception:  # a malformed publication is ignored, as a server's bug
            return
        self._sequence += 1
        self._published[published.uri] = (
            published.version,
            list(published.diagnostics),
            self._sequence,
        )
        self._wake()

    async def _request(self, method: str, params: Json) -> Json:
        """Requests a server sends its client: answered so that it carries on."""
        match method:
            case "workspace/configuration":
                # One (empty) answer per item asked: the server's defaults.
                items = (
                    cast("dict[str, Json]", params).get("items")
                    if isinstance(params, dict)
                    else None
                )
                return [None] * len(cast("list[Json]", items)) if isinstance(items, list) else []
            case "workspace/workspaceFolders":
                return [{"uri": self.root.as_uri(), "name": self.root.name}]
            case _:
                # window/workDoneProgress/create, client/registerCapability,
                # window/showMessageRequest...: accepted, and nothing more.
                return None

    async def _read(self, connection: JsonRpcConnection) -> None:
        await connection.run()
        self._wake()  # a wait for a publication sees the end at once

    def _wake(self) -> None:
        event, self._publication = self._publication, anyio.Event()
        event.set()

    async def _drain_stderr(self) -> None:
        process = self._process
        if process is None or process.stderr is None:
            return
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, OSError):
            async for chunk in process.stderr:
                self._stderr = (self._stderr + chunk.decode("utf-8", "replace"))[-STDERR_KEPT:]

    def _problem(self, error: BaseException, doing: str) -> ServerProblem:
        name = f"the {self.config.name} language server"
        if isinstance(error, TimeoutError):
            limit = self.config.startup_timeout if doing == "starting" else self.config.timeout
            return ServerProblem(f"{name} did not answer within {limit:g}s while {doing}")
        process = self._process
        code = None if process is None else process.returncode
        exited = f" (exit code {code})" if code is not None else ""
        tail = self._stderr.strip()[-600:]
        detail = f": {tail}" if tail else ""
        if isinstance(error, ResponseError):
            return ServerProblem(f"{name} failed while {doing}: {error}")
        return ServerProblem(f"{name} stopped while {doing}{exited}{detail}")


def _offers_pull(result: Json) -> bool:
    """Whether an `initialize` result announces pull diagnostics. Read from the JSON, not
    structured into `lsprotocol.types.InitializeResult`: servers announce many capabilities this
    client never uses, and one that the converter cannot structure (ruff's notebook selector
    with cattrs 26) must not make the server unusable."""
    if not isinstance(result, dict):
        return False
    capabilities = cast("dict[str, Json]", result).get("capabilities")
    return isinstance(capabilities, dict) and bool(
        cast("dict[str, Json]", capabilities).get("diagnosticProvider")
    )


def diagnostic_key(diagnostic: lsp.Diagnostic) -> tuple[int, str, str, str]:
    """What makes two diagnostics the same problem, wherever the edit moved it."""
    code = diagnostic.code
    severity = int(diagnostic.severity) if diagnostic.severity is not None else 1
    return (
        severity,
        "" if code is None else str(code),
        diagnostic.source or "",
        diagnostic.message,
    )


def severity_name(diagnostic: lsp.Diagnostic) -> str:
    return {1: "error", 2: "warning", 3: "info", 4: "hint"}.get(
        int(diagnostic.severity) if diagnostic.severity is not None else 1, "error"
    )
