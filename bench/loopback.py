"""What the turn benchmarks share (`first_prompt.py`, `load.py`): an OpenAI-compatible model on
127.0.0.1 that times its own part of every call, and an editor-like ACP client of a spawned
`earshot --stdio`.

The model (`LoopbackChat`) answers Chat Completions as a provider does, streamed: after
`first_token_ms` it sends `chunks` text chunks `chunk_ms` apart (a model thinking, then
writing). A prompt holding `read <path>` gets a `read` tool call for that path first, and the
text once the result comes back. Every call is noted with the tag the prompt carries
(`[bench <tag>]`), when its request had been read and when its answer had been written: the
model's own time, which the benchmarks subtract from a turn's to get earshot's overhead.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

TIMEOUT_SECONDS = 120.0
_TAG = re.compile(r"\[bench ([^\]]+)\]")
_READ = re.compile(r"\bread (\S+)")


@dataclass(frozen=True)
class ModelCall:
    tag: str
    arrived: float
    """`time.perf_counter()` when the request (headers and body) had been read."""
    finished: float
    """When the last byte of the answer had been written."""

    @property
    def seconds(self) -> float:
        return self.finished - self.arrived


class LoopbackChat:
    """An OpenAI-compatible Chat Completions server on 127.0.0.1 (a thread per connection)."""

    def __init__(self, *, first_token_ms: float = 0.0, chunks: int = 3, chunk_ms: float = 0.0):
        self.first_token = first_token_ms / 1000
        self.chunks = chunks
        self.chunk_gap = chunk_ms / 1000
        self.calls: list[ModelCall] = []
        self._lock = threading.Lock()
        self._arrival = threading.Condition(self._lock)
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:  # the model list: none (the catalog has the model)
                self._answer(b'{"object": "list", "data": []}', "application/json")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                arrived = time.perf_counter()
                if not self.path.endswith("/chat/completions"):
                    self._answer(b"{}", "application/json", status=404)
                    return
                tag, events = model.answer(json.loads(body))
                model.arrived(tag, arrived)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for delay, event in events:
                    if delay:
                        time.sleep(delay)
                    data = f"data: {event}\n\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                model.finished(tag, arrived, time.perf_counter())

            def _answer(self, body: bytes, content_type: str, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._arrivals: dict[str, float] = {}

    def answer(self, body: dict[str, Any]) -> tuple[str, list[tuple[float, str]]]:
        """The call's tag and its stream: (seconds to wait first, event data) pairs."""
        messages: list[dict[str, Any]] = body["messages"]
        prompt = next(_text(m) for m in reversed(messages) if m["role"] == "user")
        tag_match = _TAG.search(prompt)
        tag = tag_match.group(1) if tag_match else ""
        read = _READ.search(prompt)
        if read and messages[-1]["role"] == "user":
            call = {"path": read.group(1)}
            events = _tool_call(f"call_{tag}_{len(messages)}", "read", json.dumps(call))
        else:
            events = _text_answer(self.chunks)
        gaps = [self.first_token] + [self.chunk_gap] * (len(events) - 1)
        return tag, list(zip(gaps, events, strict=True))

    def arrived(self, tag: str, at: float) -> None:
        with self._arrival:
            self._arrivals.setdefault(tag, at)
            self._arrival.notify_all()

    def finished(self, tag: str, arrived: float, at: float) -> None:
        with self._lock:
            self.calls.append(ModelCall(tag, arrived, at))

    def first_arrival(self, tag: str, timeout: float = TIMEOUT_SECONDS) -> float:
        """When the first call tagged `tag` had been read (waits for it)."""
        with self._arrival:
            if not self._arrival.wait_for(lambda: tag in self._arrivals, timeout):
                raise TimeoutError(f"no model call tagged {tag!r}")
            return self._arrivals[tag]

    def model_seconds(self, tag: str) -> float:
        """The model's own time over every call tagged `tag`."""
        with self._lock:
            return sum(call.seconds for call in self.calls if call.tag == tag)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[dict[str, Any]] = [p for p in content if isinstance(p, dict)]  # pyright: ignore[reportUnknownVariableType]
        return "".join(str(part.get("text", "")) for part in parts)
    return ""


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "bench"}
    return json.dumps({**body, "choices": [choice]})


_USAGE = json.dumps(
    {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "bench",
        "choices": [],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020},
    }
)


def _text_answer(chunks: int) -> list[str]:
    words = [_chunk({"content": f"word{i} "}) for i in range(chunks)]
    first = _chunk({"role": "assistant", "content": ""})
    return [first, *words, _chunk({}, "stop"), _USAGE, "[DONE]"]


def _tool_call(call_id: str, name: str, arguments: str) -> list[str]:
    function = {"name": name, "arguments": ""}
    start = {"index": 0, "id": call_id, "type": "function", "function": function}
    args = {"index": 0, "function": {"arguments": arguments}}
    return [
        _chunk({"role": "assistant", "content": None, "tool_calls": [start]}),
        _chunk({"tool_calls": [args]}),
        _chunk({}, "tool_calls"),
        _USAGE,
        "[DONE]",
    ]


# ------------------------------------------------------------------------------ the client


def settings_for(model: LoopbackChat) -> dict[str, Any]:
    """User settings choosing the loopback model."""
    provider = {"api": "openai-chat", "baseUrl": model.url, "apiKey": "bench-key"}
    return {"model": "bench/bench-model", "providers": {"bench": provider}}


def bench_env(work: Path, settings: dict[str, Any]) -> dict[str, str]:
    """An environment with its own config and data dirs under `work`, no provider keys."""
    config = work / "config" / "earshot"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        HOME=str(work),
        XDG_CONFIG_HOME=str(work / "config"),
        XDG_DATA_HOME=str(work / "data"),
        NO_PROXY="127.0.0.1",
    )
    return env


@dataclass
class _Waiter:
    done: threading.Event = field(default_factory=threading.Event)
    at: float = 0.0
    message: dict[str, Any] = field(default_factory=dict[str, Any])


class AcpClient:
    """A spawned ACP agent, driven from any number of threads: a reader thread matches answers
    to requests; the agent's own requests get an error (the client offers no capabilities)."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # EARSHOT_BENCH_STDERR=1 shows the agent's log (with EARSHOT_LOG_LEVEL=DEBUG: how
            # long each session took to open and to warm up).
            stderr=None if os.environ.get("EARSHOT_BENCH_STDERR") else subprocess.DEVNULL,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin: IO[bytes] = self.process.stdin
        self._write = threading.Lock()
        self._waiters: dict[int, _Waiter] = {}
        self._ids = iter(range(1, 1 << 62))
        self.notifications = 0
        self._reader = threading.Thread(target=self._read, args=(self.process.stdout,))
        self._reader.daemon = True
        self._reader.start()

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            at = time.perf_counter()
            if not line.startswith(b"{"):
                continue  # a profiler wrapping the agent says hello (never earshot: fd 1 is kept)
            message = json.loads(line)
            if "method" in message:
                if "id" in message:
                    error = {"code": -32601, "message": "not offered"}
                    self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})
                else:
                    self.notifications += 1
                continue
            waiter = self._waiters.get(message.get("id"))
            if waiter is not None:
                waiter.at, waiter.message = at, message
                waiter.done.set()
        for waiter in list(self._waiters.values()):
            waiter.done.set()  # the agent is gone: wake everyone

    def _send(self, message: dict[str, Any]) -> float:
        data = (json.dumps(message) + "\n").encode()
        with self._write:
            self._stdin.write(data)
            self._stdin.flush()
            return time.perf_counter()

    def request(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], float, float]:
        """(the result, when the request was written, when its answer was read)."""
        request_id = next(self._ids)
        waiter = self._waiters[request_id] = _Waiter()
        written = self._send(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        )
        if not waiter.done.wait(TIMEOUT_SECONDS) or not waiter.message:
            raise RuntimeError(f"no answer to {method} (the agent exited or hung)")
        del self._waiters[request_id]
        if "error" in waiter.message:
            raise RuntimeError(f"{method} failed: {waiter.message['error']}")
        return waiter.message["result"], written, waiter.at

    def initialize(self) -> float:
        """Seconds from spawn to the `initialize` answer."""
        params: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": {}}
        _, _, at = self.request("initialize", params)
        return at - self.started

    def new_session(self, cwd: Path) -> tuple[str, float]:
        """(the session id, seconds from spawn to the answer)."""
        result, _, at = self.request("session/new", {"cwd": str(cwd), "mcpServers": []})
        return result["sessionId"], at - self.started

    def prompt(self, session_id: str, text: str) -> tuple[float, float]:
        """(when the prompt was written, when its answer was read)."""
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        result, written, at = self.request("session/prompt", params)
        assert result["stopReason"] == "end_turn", result
        return written, at

    def cpu_seconds(self) -> float:
        """The agent's CPU time so far (user + system, its threads included)."""
        return cpu_seconds(self.process.pid)

    def rss_mb(self) -> float:
        return rss_mb(self.process.pid)

    def close(self) -> None:
        self._stdin.close()
        try:
            self.process.wait(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far: user + system, all its threads (`/proc/<pid>/stat`)."""
    user, system = cpu_split(pid)
    return user + system


def cpu_split(pid: int) -> tuple[float, float]:
    """A process's (user, system) CPU seconds so far."""
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    fields = stat[stat.rfind(b")") + 2 :].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (`share` in 0..1) of `values`."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered) + 0.5) - 1))]


def interleaved(labels: list[str], runs: int) -> Iterator[tuple[int, str]]:
    """(run, label) in the order A, B, A, B... so that a burst of load hits all alike."""
    for run in range(runs):
        for label in labels:
            yield run, label
