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
from tests.acp_server.test_tools import bash_call

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


async def test_the_python_sdk_is_not_sent_cancel_request_it_cannot_take(
    agent_env: AgentEnv, caplog: pytest.LogCaptureFixture
) -> None:
    """The Python SDK 0.12.1 has no `$/cancel_request` route: each one logged "Method not
    found" with a traceback ("Unhandled error while handling notification"). Cancelling a turn
    with a prompt pending still ends it at once, and sends it nothing it cannot take."""
    import acp
    from acp.schema import ClientCapabilities, FileSystemCapabilities

    agent_env.script(
        [{"tool_calls": [bash_call("touch never.txt", description="Touch")]}, {"text": "no"}]
    )
    asked = anyio.Event()
    prompts: list[Any] = []

    class Client:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            return None

        async def request_permission(
            self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
        ) -> Any:
            prompts.append((tool_call, options))
            asked.set()
            await anyio.sleep_forever()

        def on_connect(self, conn: Any) -> None:
            return None

    with anyio.fail_after(30):
        async with acp.spawn_agent_process(
            Client(),  # pyright: ignore[reportArgumentType]
            sys.executable,
            "-m",
            "earshot",
            "--stdio",
            env=agent_env.environ(),
            cwd=str(agent_env.workspace),
        ) as (connection, _process):
            await connection.initialize(
                protocol_version=1,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
                ),
            )
            session = await connection.new_session(cwd=str(agent_env.workspace), mcp_servers=[])
            async with anyio.create_task_group() as group:

                async def prompt() -> None:
                    result = await connection.prompt(
                        session_id=session.session_id, prompt=[acp.text_block("touch")]
                    )
                    assert result.stop_reason == "cancelled"

                group.start_soon(prompt)
                await asked.wait()
                await connection.cancel(session_id=session.session_id)
    [(tool_call, options)] = prompts
    assert tool_call.title == "touch never.txt  # Touch"  # the prompt shows the command
    assert len({option.kind for option in options}) == len(options)
    assert not (agent_env.workspace / "never.txt").exists()
    assert "cancel_request" not in caplog.text


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


async def run_node_client(script: str, agent_env: AgentEnv) -> dict[str, Any]:
    """Run `tests/node/<script>` against `earshot --stdio` in the workspace; the report its last
    output line holds (the script fails the test with its stderr when it exits non-zero)."""
    command = [
        "node",
        str(NODE_DIR / script),
        str(agent_env.workspace),
        sys.executable,
        "-m",
        "earshot",
        "--stdio",
    ]
    with anyio.fail_after(60):
        result = await anyio.run_process(
            command,
            env=agent_env.environ(),
            cwd=agent_env.workspace,
            check=False,
            stderr=subprocess.PIPE,
        )
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    return json.loads(result.stdout.decode().strip().splitlines()[-1])


def test_a_missing_node_sdk_fails_in_ci_and_skips_elsewhere(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match="npm ci"):
        require_node({"CI": "true"}, tmp_path)
    with pytest.raises(pytest.skip.Exception):
        require_node({}, tmp_path)


async def test_typescript_sdk_client(agent_env: AgentEnv) -> None:
    require_node(os.environ)
    target = _scenario(agent_env)
    report = await run_node_client("client.mjs", agent_env)
    assert report["protocolVersion"] == 1
    assert report["stopReason"] == "end_turn"
    assert "agent_message_chunk" in report["updates"]
    assert "tool_call" in report["updates"]
    assert report["permissionToolCall"] == "call-1"
    assert report["text"] == "Writing.All done."
    assert target.read_text(encoding="utf-8") == "from sdk\n"


async def test_the_typescript_sdk_client_sees_the_command_it_approves(
    agent_env: AgentEnv,
) -> None:
    """What a TS-SDK client shows before approval holds the exact command: the title starts
    with it (the model's description after it), a content block shows it; one option per kind."""
    require_node(os.environ)
    command = "rm -rf ./important && ls"
    (agent_env.workspace / "important").mkdir()
    agent_env.script(
        [
            {
                "tool_calls": [
                    {
                        "name": "bash",
                        "id": "call-1",
                        "arguments": {"command": command, "description": "List files"},
                    }
                ]
            },
            {"text": "Listed."},
        ]
    )
    result = await anyio.run_process(
        [
            "node",
            str(NODE_DIR / "client.mjs"),
            str(agent_env.workspace),
            sys.executable,
            "-m",
            "earshot",
            "--stdio",
        ],
        env=agent_env.environ(),
        cwd=agent_env.workspace,
        check=False,
        stderr=subprocess.PIPE,
    )
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    report = json.loads(result.stdout.decode().strip().splitlines()[-1])
    [permission] = report["permissions"]
    assert permission["title"] == f"{command}  # List files"
    assert any(f"\n{command}\n" in text for text in permission["texts"])
    kinds = [option["kind"] for option in permission["options"]]
    assert len(set(kinds)) == len(kinds) and kinds[0] == "allow_once"


# ------------------------------------------------------------------ step runs (several processes)
#
# The same steps, run by either SDK in one process per call: a test that needs several processes
# on one session (acpx's `sessions new` then `prompt`) calls it several times.

Steps = list[dict[str, Any]]


async def python_steps(env: AgentEnv, steps: Steps) -> dict[str, Any]:
    import acp
    from acp.schema import ClientCapabilities, FileSystemCapabilities

    report: dict[str, Any] = {"answers": [], "updates": []}
    arrived = anyio.Event()

    class Client:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            nonlocal arrived
            report["updates"].append(update.model_dump(mode="json", by_alias=True))
            arrived.set()
            arrived = anyio.Event()

        async def request_permission(
            self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
        ) -> Any:
            from acp.schema import AllowedOutcome

            option = next(o for o in options if o.kind == "allow_once")
            return acp.RequestPermissionResponse(
                outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
            )

        async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> Any:
            return acp.ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

        async def write_text_file(
            self, content: str, path: str, session_id: str, **kwargs: Any
        ) -> Any:
            Path(path).write_text(content, encoding="utf-8")
            return acp.WriteTextFileResponse()

        def on_connect(self, conn: Any) -> None:
            return None

    cwd = str(env.workspace)
    with anyio.fail_after(60):
        async with acp.spawn_agent_process(
            Client(),  # pyright: ignore[reportArgumentType]
            sys.executable,
            "-m",
            "earshot",
            "--stdio",
            env=env.environ(),
            cwd=cwd,
        ) as (connection, _process):
            await connection.initialize(
                protocol_version=1,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
                ),
            )
            session_id = ""
            for step in steps:
                answer: Any = None
                match step["do"]:
                    case "new":
                        answer = await connection.new_session(cwd=cwd, mcp_servers=[])
                        session_id = answer.session_id
                    case "load":
                        session_id = step["sessionId"]
                        answer = await connection.load_session(
                            cwd=cwd, session_id=session_id, mcp_servers=[]
                        )
                    case "prompt":
                        answer = await connection.prompt(
                            session_id=session_id, prompt=[acp.text_block(step["text"])]
                        )
                    case "waitFor":
                        while not any(
                            u["sessionUpdate"] == step["update"] for u in report["updates"]
                        ):
                            await arrived.wait()
                    case "setConfig":
                        answer = await connection.set_config_option(
                            config_id=step["configId"], session_id=session_id, value=step["value"]
                        )
                    case _:
                        raise AssertionError(f"unknown step {step}")
                report["answers"].append(
                    None if answer is None else answer.model_dump(mode="json", by_alias=True)
                )
            report["sessionId"] = session_id
    return report


async def typescript_steps(env: AgentEnv, steps: Steps) -> dict[str, Any]:
    require_node(os.environ)
    command = [
        "node",
        str(NODE_DIR / "steps.mjs"),
        json.dumps(steps),
        str(env.workspace),
        sys.executable,
        "-m",
        "earshot",
        "--stdio",
    ]
    with anyio.fail_after(60):
        result = await anyio.run_process(
            command, env=env.environ(), cwd=env.workspace, check=False, stderr=subprocess.PIPE
        )
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    report: dict[str, Any] = json.loads(result.stdout.decode().strip().splitlines()[-1])
    assert report["sdkErrors"] == []
    return report


RUNNERS = {"python": python_steps, "typescript": typescript_steps}


@pytest.mark.parametrize("sdk", sorted(RUNNERS))
async def test_a_new_session_is_found_by_other_processes_and_replays_a_created_file(
    agent_env: AgentEnv, sdk: str
) -> None:
    run = RUNNERS[sdk]
    target = _scenario(agent_env)
    created = await run(agent_env, [{"do": "new"}])
    session_id = created["sessionId"]
    # acpx's flow: `sessions new` in one process, then `prompt` from another, before anything
    # was said in the session.
    prompted = await run(
        agent_env,
        [{"do": "load", "sessionId": session_id}, {"do": "prompt", "text": "write it"}],
    )
    assert prompted["answers"][1]["stopReason"] == "end_turn"
    assert target.read_text(encoding="utf-8") == "from sdk\n"
    # The file is rewritten later: the replay still shows it as the call created it.
    target.write_text("changed since\n", encoding="utf-8")
    loaded = await run(agent_env, [{"do": "load", "sessionId": session_id}])
    calls = [u for u in loaded["updates"] if u["sessionUpdate"].startswith("tool_call")]
    assert [(c["sessionUpdate"], c["toolCallId"], c["status"]) for c in calls] == [
        ("tool_call", "call-1", "completed")
    ]
    [diff] = [c for c in calls[0]["content"] if c["type"] == "diff"]
    assert (diff["path"], diff.get("oldText"), diff["newText"]) == (str(target), None, "from sdk\n")


@pytest.mark.parametrize("sdk", sorted(RUNNERS))
async def test_the_model_option_lists_a_custom_servers_models_and_usage_has_a_size(
    agent_env: AgentEnv, sdk: str
) -> None:
    from tests.earshot.support import text_reply
    from tests.loopback import Reply, loopback

    window = 24_680
    with loopback(text_reply("Served locally.")) as server:
        server.routes["GET /v1/models"] = Reply.json(
            {
                "object": "list",
                "data": [
                    {"id": "fake-model-mini", "object": "model", "max_model_len": window},
                    {"id": "fake-model-max", "object": "model"},
                ],
            }
        )
        agent_env.write_settings(
            {
                "model": "local/fake-model-mini",
                "providers": {
                    "local": {"api": "openai-chat", "baseUrl": f"{server.url}/v1", "apiKey": "k"}
                },
            }
        )
        report = await RUNNERS[sdk](
            agent_env,
            [
                {"do": "new"},
                {"do": "waitFor", "update": "config_option_update"},
                {"do": "setConfig", "configId": "model", "value": "local/fake-model-max"},
                {"do": "setConfig", "configId": "model", "value": "local/fake-model-mini"},
                {"do": "prompt", "text": "hi"},
            ],
        )
    [update] = [u for u in report["updates"] if u["sessionUpdate"] == "config_option_update"]
    [model] = [o for o in update["configOptions"] if o["id"] == "model"]
    values = [c["value"] for group in model["options"] for c in group["options"]]
    assert values == ["local/fake-model-mini", "local/fake-model-max"]
    switched = report["answers"][2]["configOptions"]
    assert [o["currentValue"] for o in switched if o["id"] == "model"] == ["local/fake-model-max"]
    assert report["answers"][4]["stopReason"] == "end_turn"
    [usage] = [u for u in report["updates"] if u["sessionUpdate"] == "usage_update"]
    assert usage["size"] == window  # no catalog knows the model: its server said


# ------------------------------------------------------------------- ACP v1's unstable surface


async def test_typescript_sdk_unstable_client(agent_env: AgentEnv) -> None:
    """The SDK's `/unstable` entry point (every message validated against schema.unstable.json)
    drives each unstable item in one process: plans with ids, a subagent as a child session, an
    MCP server it provides over ACP, a systemPrompt, titles, status, archiving, auth status."""
    require_node(os.environ)
    todo = {"todos": [{"content": "Delegate", "status": "in_progress"}]}
    task = {"description": "Count the notes", "prompt": "Count them", "tools": ["read"]}
    agent_env.script(
        [
            {
                "tool_calls": [
                    {"name": "todo", "id": "call-todo", "arguments": todo},
                    {"name": "task", "id": "call-task", "arguments": task},
                    {"name": "mcp__notes__add", "id": "call-note", "arguments": {"text": "milk"}},
                ]
            },
            {"text": "Three notes."},
            {"text": "All done."},
        ],
        extra={"mcp": {"startupWait": 30}},
    )
    report = await run_node_client("unstable.mjs", agent_env)
    assert report["sdkErrors"] == []
    capabilities = report["agentCapabilities"]
    assert capabilities["mcpCapabilities"]["acp"] is True
    assert {"title", "status", "archive", "systemPrompt"} <= set(
        capabilities["sessionCapabilities"]
    )
    assert report["authStatus"]["state"] == "not_required"
    assert report["prompt"]["stopReason"] == "end_turn"
    parent = report["sessionId"]

    def kinds(session_id: str) -> list[str]:
        return [
            item["update"]["sessionUpdate"]
            for item in report["updates"]
            if item["sessionId"] == session_id
        ]

    [announced] = [
        item["update"]
        for item in report["updates"]
        if item["update"]["sessionUpdate"] == "subagent_update"
        and item["update"].get("title") == "Count the notes"
    ]
    child = announced["sessionId"]
    assert {"plan_update", "subagent_update", "session_message", "session_message_chunk"} <= set(
        kinds(parent)
    )
    assert "plan" not in kinds(parent)
    assert {"session_message", "session_message_chunk", "agent_message_chunk"} <= set(kinds(child))
    note = [
        item["update"]
        for item in report["updates"]
        if item["update"].get("toolCallId") == "call-note"
    ]
    assert note[-1]["status"] == "completed" and "noted: milk" in json.dumps(note[-1])
    assert report["mcp"] == ["server/discover", "tools/list", "tools/call"]
    assert {"sessionId": parent, "toolCallId": "call-note"} in report["permissions"]
    assert report["title"] == {"title": "From the SDK"}
    assert report["status"] == {"status": "open"}
    [listed] = [s for s in report["listed"]["sessions"] if s["sessionId"] == parent]
    assert (listed["title"], listed["archived"]) == ("From the SDK", False)
    assert parent not in [s["sessionId"] for s in report["afterArchive"]["sessions"]]
    assert [s["sessionId"] for s in report["archivedOnly"]["sessions"]] == [parent]
    assert parent in [s["sessionId"] for s in report["afterUnarchive"]["sessions"]]
    assert report["statusAfterArchive"] == {"status": "saved"}  # archiving closed it
    assert report["authUpdates"][-1]["state"] == "unauthenticated"
