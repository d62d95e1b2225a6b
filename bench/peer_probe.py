"""Start-up of any ACP agent, timed the way `acp_probe.py` (the project's shared start-up probe)
times it, so that earshot and a peer (codex-acp) are measured by one harness in one run.

Per run: the clock starts just before the agent is spawned; `initialize` is written at once
(protocol 1, `fs` read/write and `terminal` client capabilities, a `clientInfo`), then, when the
agent names one, `authenticate`, then `session/new` (the workspace, no MCP servers). Each figure
is read when the answer's line has been read off the agent's stdout. Requests from the agent get
-32601. Memory is the resident set of the agent's whole process tree (`/proc`, VmRSS summed over
it and its descendants), read right when the `session/new` answer arrived (`rss_at_ready_mb`).
The agent's stdin is then closed; it gets 3 s to exit before its process group is killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

TIMEOUT_SECONDS = 60.0
GRACE_SECONDS = 3.0


@dataclass(frozen=True)
class Startup:
    init_ms: float
    """Spawn -> `initialize` answered."""
    ready_ms: float
    """Spawn -> `session/new` answered (after `authenticate`, when the agent needs it)."""
    rss_at_ready_mb: float
    """The process tree's resident memory when `session/new` was answered."""


class _Lines:
    """The agent's answers by id, read by a thread as they come."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin: IO[bytes] = process.stdin
        self._answers: dict[object, tuple[float, dict[str, Any]]] = {}
        self._ready = threading.Condition()
        self._ended = False
        self._write = threading.Lock()
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        with self._write:
            self._stdin.write(data)
            self._stdin.flush()

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            at = time.perf_counter()
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            typed: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
            if "method" in typed:
                if "id" in typed:
                    error = {"code": -32601, "message": "not offered"}
                    self.send({"jsonrpc": "2.0", "id": typed["id"], "error": error})
                continue
            with self._ready:
                self._answers[typed.get("id")] = (at, typed)
                self._ready.notify_all()
        with self._ready:
            self._ended = True
            self._ready.notify_all()

    def answer(self, request_id: object, method: str) -> float:
        """When the answer to `request_id` was read (raises if it is an error or never comes)."""
        with self._ready:
            if not self._ready.wait_for(
                lambda: request_id in self._answers or self._ended, TIMEOUT_SECONDS
            ):
                raise TimeoutError(f"no answer to {method}")
            if request_id not in self._answers:
                raise RuntimeError(f"the agent closed its output before answering {method}")
            at, message = self._answers[request_id]
        if "error" in message:
            raise RuntimeError(f"{method} failed: {message['error']}")
        return at


def probe(
    command: list[str], cwd: Path, env: dict[str, str], authenticate: str | None = None
) -> Startup:
    """One start of the agent `command`, measured (see the module docstring)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        bufsize=0,
    )
    lines = _Lines(process)
    try:
        capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
        params: dict[str, Any] = {
            "protocolVersion": 1,
            "clientCapabilities": capabilities,
            "clientInfo": {"name": "earshot-bench", "version": "1"},
        }
        lines.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        init = lines.answer(0, "initialize")
        if authenticate is not None:
            request = {"methodId": authenticate}
            lines.send(
                {"jsonrpc": "2.0", "id": "auth", "method": "authenticate", "params": request}
            )
            lines.answer("auth", "authenticate")
        params = {"cwd": str(cwd), "mcpServers": []}
        lines.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params})
        ready = lines.answer(1, "session/new")
        rss = tree_rss_mb(process.pid)
    finally:
        _stop(process)
    return Startup((init - started) * 1000, (ready - started) * 1000, rss)


def _stop(process: subprocess.Popen[bytes]) -> None:
    assert process.stdin is not None
    with contextlib.suppress(OSError):
        process.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=GRACE_SECONDS)
    # Whatever is left in its process group (codex-acp starts helpers).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def tree_rss_mb(root: int) -> float:
    """VmRSS summed over `root` and its descendants."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat[stat.rfind(b")") + 2 :].split()[1])
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    total_kb = 0
    for pid in tree:
        try:
            status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total_kb += int(line.split()[1])
    return total_kb / 1024
