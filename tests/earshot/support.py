"""Shared pieces of the earshot tests: an isolated environment (XDG dirs in tmp, no keys), the
`earshot` command run as a subprocess, and Chat Completions SSE replies for the loopback server."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.earshot.warm import run_earshot
from tests.loopback import Reply

HERE = Path(__file__).resolve().parent
DEMO_SERVER = HERE / "mcp_demo_server.py"
RUN_SECONDS = 40.0


@dataclass
class Env:
    root: Path
    workspace: Path
    config_home: Path
    data_home: Path
    home: Path

    def environ(self, **extra: str) -> dict[str, str]:
        keep = {
            name: os.environ[name] for name in ("PATH", "LANG", "SYSTEMROOT") if name in os.environ
        }
        return {
            **keep,
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.config_home),
            "XDG_DATA_HOME": str(self.data_home),
            "PYTHONUNBUFFERED": "1",
            **extra,
        }

    def write_settings(self, data: Mapping[str, Any]) -> Path:
        path = self.config_home / "earshot" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    def local_provider(self, url: str, **extra: Any) -> Path:
        """User settings with an OpenAI-compatible `local` provider at `url` as the model."""
        return self.write_settings(
            {
                "model": "local/test-model",
                "providers": {
                    "local": {"api": "openai-chat", "baseUrl": f"{url}/v1", "apiKey": "test-key"}
                },
                **extra,
            }
        )


def make_env(tmp_path: Path) -> Env:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    return Env(
        root=tmp_path,
        workspace=workspace.resolve(),
        config_home=tmp_path / "config",
        data_home=tmp_path / "data",
        home=home,
    )


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def lines(self) -> list[dict[str, Any]]:
        """stdout as NDJSON: every line must parse."""
        return [json.loads(line) for line in self.stdout.splitlines()]


async def earshot(
    env: Env,
    *args: str,
    extra_env: Mapping[str, str] | None = None,
    cold: bool = False,
    reader_gone: bool = False,
) -> Run:
    """Run `earshot ARGS` in the workspace and wait for it: a process of its own, forked from a
    parent that has already imported earshot (`tests/earshot/warm.py` says why and what
    differs from `python -m earshot`), or with `cold` a fresh `python -m earshot`."""
    code, stdout, stderr = await run_earshot(
        args,
        env.workspace,
        env.environ(**(extra_env or {})),
        seconds=RUN_SECONDS,
        cold=cold,
        reader_gone=reader_gone,
    )
    return Run(
        code=code,
        stdout=stdout.decode("utf-8", errors="replace"),
        stderr=stderr.decode("utf-8", errors="replace"),
    )


# -------------------------------------------------------------------- Chat Completions SSE


def _chunk(delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "test-model",
        "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
    }


def _sse(chunks: Sequence[Mapping[str, Any]]) -> Reply:
    body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    return Reply(body=body.encode())


def text_reply(text: str) -> Reply:
    """A streamed assistant answer."""
    return _sse(
        [
            _chunk({"role": "assistant", "content": ""}),
            *(_chunk({"content": piece}) for piece in _pieces(text)),
            _chunk({}, "stop"),
        ]
    )


def tool_reply(*calls: tuple[str, str, Mapping[str, Any]], text: str | None = None) -> Reply:
    """A streamed assistant message calling tools: (call id, name, arguments), after `text`."""
    deltas: list[dict[str, Any]] = [_chunk({"role": "assistant", "content": text})]
    for index, (call_id, name, arguments) in enumerate(calls):
        deltas.append(
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ]
                }
            )
        )
    deltas.append(_chunk({}, "tool_calls"))
    return _sse(deltas)


def _pieces(text: str) -> list[str]:
    words = text.split(" ")
    return [word if i == 0 else " " + word for i, word in enumerate(words)]


def tool_messages(request_body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The `role: tool` messages of a recorded Chat Completions request."""
    return [m for m in request_body["messages"] if m.get("role") == "tool"]
