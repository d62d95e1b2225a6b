"""ACP v2 end to end with the official TypeScript SDK 2.4.0, from its
`/experimental/v2/unstable` entry point (tests/node/v2.mjs): the SDK's own checks, and every line
either side wrote validated against the v2 schema."""

from __future__ import annotations

import base64
import json
import os

from tests.acp_server.client import AgentEnv, Json, method_types, schema_errors
from tests.acp_server.test_sdk_clients import require_node, run_node_client
from tests.acp_server.test_tools import bash_call, write_call
from tests.processes import unique_sleep


def v2_violations(sent: list[str], received: list[str]) -> list[str]:
    """Every message the agent wrote, checked against the v2 schema definition its method
    names (a response: the method of the client's request with its id)."""
    types = method_types(2)
    methods = {m["id"]: m["method"] for m in map(json.loads, sent) if "id" in m and "method" in m}
    problems: list[str] = []
    for line in received:
        message: Json = json.loads(line)
        if "method" in message:
            kind = "request" if "id" in message else "notification"
            key, value = (message["method"], kind), message.get("params")
        elif "error" in message:
            problems += schema_errors("v2:Error", message["error"])
            continue
        else:
            key, value = (methods[message["id"]], "response"), message.get("result")
        definition = types.get(key)
        if definition is None:
            problems.append(f"no v2 definition for {key}: {line[:200]}")
        else:
            problems += schema_errors(definition, value)
    return problems


async def test_the_typescript_sdk_drives_v2(agent_env: AgentEnv) -> None:
    require_node(os.environ)
    target = agent_env.workspace / "sdk.txt"
    agent_env.script(
        [
            {"tool_calls": [write_call(str(target), "from sdk v2\n")]},
            {"text": "Written."},
            {"tool_calls": [bash_call(f"echo running; {unique_sleep(30)}")]},
            {"text": "Stopped."},
        ],
        extra={"sandbox": {"enabled": False}},
    )
    report = await run_node_client("v2.mjs", agent_env)
    assert v2_violations(report["sent"], report["received"]) == []
    assert report["sdkErrors"] == []
    assert report["protocolVersion"] == 2 and report["fork"]
    assert report["stops"] == ["end_turn", "end_turn"]
    # The prompt names its call: v2's `subject` (the call, as an update would patch it).
    asked = [(p["subject"], p["toolCallId"]) for p in report["permissions"]]
    assert asked == [("tool_call", "call-write"), ("tool_call", "call-bash")]
    assert report["permissions"][1]["title"].startswith("echo running; sleep 30.")
    assert target.read_text(encoding="utf-8") == "from sdk v2\n"
    assert report["cancelAnswer"] == {}
    finals = [
        u
        for u in report["updates"]
        if u["sessionUpdate"] == "tool_call_update"
        and u["toolCallId"] == "call-bash"
        and u.get("status") in ("completed", "failed", "cancelled")
    ]
    assert [u["status"] for u in finals] == ["cancelled"]
    output = "".join(
        base64.b64decode(u["data"]).decode()
        for u in report["updates"]
        if u["sessionUpdate"] == "terminal_output_chunk"
    )
    assert "running" in output
    assert report["modes"] == ["ask", "plan"]
    assert report["listed"] == [report["sessionId"]]
    assert report["forked"] != report["sessionId"] and report["forkModes"] == ["plan"]
    replayed = [
        json.loads(line)["params"]["update"]
        for line in report["received"]
        if '"user_message"' in line
    ]
    # Live echoes, then the replay: the same two messages with the same ids.
    assert [u["content"][0]["text"] for u in replayed] == ["write it", "run it"] * 2
    assert replayed[0]["messageId"] == report["inserted"] == replayed[2]["messageId"]
