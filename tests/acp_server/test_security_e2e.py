"""The permission gate's critical classes over ACP that `test_gate_e2e` and `test_sandbox` leave
out, as an editor drives earshot with the scripted model: a command in `auto` that writes
outside the project (no parser sees it, the sandbox stops it, the editor is asked and says no),
with the editor's terminal and without; and a command reading earshot's own environment
(`/proc/$PPID/environ`, earshot being its parent when commands run locally) and earshot's
settings (an `apiKey`), shown to work without the sandbox (issue 12)."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp_server.client import (
    FULL_CAPABILITIES,
    AcpClient,
    AgentEnv,
    initialize,
    open_agent,
    spawn_agent,
)
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import bash_call, call_updates

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the real sandbox tests run on Linux"
)

LOCAL_ONLY: dict[str, Any] = {"fs": {"readTextFile": True, "writeTextFile": True}}
"""An editor without terminals: earshot runs commands itself, as their parent process."""
PARENT_KEY = "sk-ant-acp-parent-sentinel"
SETTINGS_KEY = "sk-acp-settings-sentinel"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the workspace and the temp dir (which commands may write)."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed; scripts/test installs it")
    path = Path(tempfile.mkdtemp(prefix="earshot-outside-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def keep_in_sandbox(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
    option = next(o for o in params["options"] if o["kind"] == "reject_once")
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


@pytest.mark.parametrize("capabilities", [FULL_CAPABILITIES, LOCAL_ONLY], ids=["terminal", "local"])
async def test_a_command_in_auto_cannot_write_outside(
    agent_env: AgentEnv, outside: Path, capabilities: dict[str, Any]
) -> None:
    # `auto` allows it (no parser can tell what an interpreter writes); the sandbox stops it.
    target = outside / "f"
    command = f"python3 -c \"open('{target}', 'w').write('x')\""
    agent_env.script([{"tool_calls": [bash_call(command)]}, {"text": "ok"}], mode="auto")
    async with open_agent(agent_env) as client:
        client.handlers["session/request_permission"] = keep_in_sandbox
        await initialize(client, capabilities)
        session_id = (await new_session(client, agent_env))["sessionId"]
        result = await client.call("session/prompt", text_prompt(session_id, "write outside"))
        [asked] = client.requests_named("session/request_permission")
        final = call_updates(client, session_id, "call-bash")[-1]
    assert result["stopReason"] == "end_turn"
    assert not target.exists()
    # The only prompt is the sandbox's: the gate let the command run confined.
    assert [(o["optionId"], o["kind"]) for o in asked["params"]["options"]] == [
        ("run_outside_sandbox", "allow_once"),
        ("keep_sandbox_failure", "reject_once"),
    ]
    assert final["status"] == "failed"
    assert final["rawOutput"]["sandbox"] == "stopped"
    if capabilities is LOCAL_ONLY:  # (an editor terminal's card shows the terminal instead)
        assert "The sandbox stopped this command" in json.dumps(final["content"])


PEEK = (
    "echo PARENT; tr '\\0' '\\n' < /proc/$PPID/environ; "
    "echo SETTINGS; cat ~/.config/earshot/settings.json $XDG_CONFIG_HOME/earshot/settings.json"
)


@pytest.mark.parametrize("sandbox", [True, False])
async def test_a_command_cannot_read_earshots_environment_or_settings(
    agent_env: AgentEnv, sandbox: bool
) -> None:
    agent_env.extra_env["ANTHROPIC_API_KEY"] = PARENT_KEY
    vault = {"api": "openai-chat", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": SETTINGS_KEY}
    agent_env.script(
        [
            {
                "tool_calls": [
                    bash_call(PEEK),
                    {
                        "name": "read",
                        "id": "r",
                        "arguments": {"path": str(agent_env.settings_path)},
                    },
                ]
            },
            {"text": "ok"},
        ],
        mode="yolo",
        extra={"sandbox": {"enabled": sandbox}},
    )
    # `script` names its own provider: put the vault beside it.
    settings = json.loads(agent_env.settings_path.read_text(encoding="utf-8"))
    settings["providers"]["vault"] = vault
    agent_env.settings_path.write_text(json.dumps(settings), encoding="utf-8")
    # A real process: the command reads its parent's environment, which must be earshot's.
    async with spawn_agent(agent_env) as client:
        await initialize(client, LOCAL_ONLY)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "look around"))
        shown = json.dumps(call_updates(client, session_id, "call-bash")[-1])
        read = json.dumps(call_updates(client, session_id, "r")[-1])
    assert "PARENT" in shown and "SETTINGS" in shown  # the command ran
    assert "explicit rule" in read and SETTINGS_KEY not in read  # the read tool: a secret
    if sandbox:
        assert PARENT_KEY not in shown  # its parent is the sandbox's init, not earshot
        assert SETTINGS_KEY not in shown  # earshot's config dir is hidden
    else:
        # What the sandbox prevents: earshot is the parent, its files are readable.
        assert PARENT_KEY in shown
        assert SETTINGS_KEY in shown
