"""End to end with the official client SDKs: PyPI `agent-client-protocol` and npm
`@agentclientprotocol/sdk` (tests/node/client.mjs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.acp_server.client import AgentEnv

NODE_DIR = Path(__file__).resolve().parents[1] / "node"


def _scenario(env: AgentEnv) -> Path:
    target = env.workspace / "sdk.txt"
    env.script(
        [
            {
                "reasoning": "Write the file.",
                "text": "Writing.",
                "tool_calls": [
                    {
                        "name": "write",
                        "id": "call-1",
                        "arguments": {"path": str(target), "content": "from sdk\n"},
                    }
                ],
            },
            {"text": "All done."},
        ]
    )
    return target


async def test_python_sdk_client(agent_env: AgentEnv) -> None:
    import acp
    from acp.schema import AllowedOutcome, ClientCapabilities, FileSystemCapabilities

    target = _scenario(agent_env)
    updates: list[Any] = []
    permissions: list[Any] = []
    writes: dict[str, str] = {}

    class Client:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            updates.append(update)

        async def request_permission(
            self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
        ) -> Any:
            permissions.append(tool_call)
            option = next(o for o in options if o.kind == "allow_once")
            return acp.RequestPermissionResponse(
                outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
            )

        async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> Any:
            return acp.ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

        async def write_text_file(
            self, content: str, path: str, session_id: str, **kwargs: Any
        ) -> Any:
            writes[path] = content
            Path(path).write_text(content, encoding="utf-8")
            return acp.WriteTextFileResponse()

        def on_connect(self, conn: Any) -> None:
            return None

    with anyio.fail_after(30):
        async with acp.spawn_agent_process(
            # Implements only the methods this scenario uses, not the SDK's whole Client protocol.
            Client(),  # pyright: ignore[reportArgumentType]
            sys.executable,
            "-m",
            "earshot",
            "--stdio",
            env=agent_env.environ(),
            cwd=str(agent_env.workspace),
        ) as (connection, _process):
            init = await connection.initialize(
                protocol_version=1,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
                ),
            )
            assert init.protocol_version == 1
            session = await connection.new_session(cwd=str(agent_env.workspace), mcp_servers=[])
            result = await connection.prompt(
                session_id=session.session_id, prompt=[acp.text_block("write it")]
            )
            assert result.stop_reason == "end_turn"
            listed = await connection.list_sessions()
            assert [s.session_id for s in listed.sessions] == [session.session_id]
    kinds = [update.session_update for update in updates]
    assert "agent_message_chunk" in kinds
    assert "tool_call" in kinds
    assert permissions and permissions[0].tool_call_id == "call-1"
    assert writes == {str(target): "from sdk\n"}


def require_node(environ: Mapping[str, str], node_dir: Path = NODE_DIR) -> None:
    """Skip when node or the npm SDK is missing, except in CI (`CI` set), where that fails: the
    TypeScript client must not silently stop being tested."""
    if shutil.which("node") is None:
        missing = "node is not installed"
    elif not (node_dir / "node_modules" / "@agentclientprotocol" / "sdk").exists():
        missing = f"run `npm ci` in {node_dir} first (scripts/test does)"
    else:
        return
    if environ.get("CI"):
        pytest.fail(f"CI is set but the TypeScript SDK test cannot run: {missing}")
    pytest.skip(missing)


def test_a_missing_node_sdk_fails_in_ci_and_skips_elsewhere(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match="npm ci"):
        require_node({"CI": "true"}, tmp_path)
    with pytest.raises(pytest.skip.Exception):
        require_node({}, tmp_path)


async def test_typescript_sdk_client(agent_env: AgentEnv) -> None:
    require_node(os.environ)
    target = _scenario(agent_env)
    command = [
        "node",
        str(NODE_DIR / "client.mjs"),
        str(agent_env.workspace),
        sys.executable,
        "-m",
        "earshot",
        "--stdio",
    ]
    result = await anyio.run_process(
        command,
        env=agent_env.environ(),
        cwd=agent_env.workspace,
        check=False,
        stderr=subprocess.PIPE,
    )
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    report = json.loads(result.stdout.decode().strip().splitlines()[-1])
    assert report["protocolVersion"] == 1
    assert report["stopReason"] == "end_turn"
    assert "agent_message_chunk" in report["updates"]
    assert "tool_call" in report["updates"]
    assert report["permissionToolCall"] == "call-1"
    assert report["text"] == "Writing.All done."
    assert target.read_text(encoding="utf-8") == "from sdk\n"
