"""What Zed's ACP client needs of earshot, on the wire (in memory, every message validated
against the schema by the test client). Zed cannot run here: each test restates what the Zed
function named in its docstring does with what we send (read from Zed's late-2026 source:
`crates/agent_ui/`, `crates/acp_thread/`), and asserts that this gives the user what they
should see. Where Zed is at fault, `editors/zed/README.md` says what earshot does about it."""

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
    SCHEMA_PATH,
    AcpClient,
    AgentEnv,
    Json,
    initialize,
    open_agent,
)
from tests.acp_server.clients import assert_keys_do_what_they_say, zed_hints, zed_key
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import bash_call, call_updates, write_call
from tests.earshot.support import DEMO_SERVER

linux_sandbox = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the real sandbox tests run on Linux"
)


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


def pick(kind: str) -> Any:
    """Answer every prompt as Zed's key for `kind` would (`zed_key`)."""

    async def answer(client: AcpClient, params: Json) -> Json:
        option = zed_key(params["options"], kind)
        assert option is not None, params["options"]
        return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}

    return answer


def session_updates(client: AcpClient) -> list[tuple[int, Json]]:
    return [
        (index, message["params"]["update"])
        for index, message in enumerate(client.messages)
        if message.get("method") == "session/update"
    ]


async def test_the_allow_always_key_grants_what_its_hint_says(agent_env: AgentEnv) -> None:
    """`permission_option_for_action` (the AllowAlways key takes the option whose id is exactly
    `allow_always`, else the first of the kind) and `render_permission_buttons_flat` (the hint
    sits on the first `allow_always` option; one version skips an `allow_thread` id): with one
    option per kind and no id Zed reads specially, the key answers the option its hint marks,
    which is the safer "always", for this session; nothing is saved for the project."""
    first, second = agent_env.workspace / "one.txt", agent_env.workspace / "two.txt"
    agent_env.script(
        [
            {"tool_calls": [bash_call(f"touch {first}", call_id="b1")]},
            {"tool_calls": [bash_call(f"touch {second}", call_id="b2")]},
            {"text": "ok"},
        ]
    )
    async with open_agent(agent_env) as client:
        client.handlers["session/request_permission"] = pick("allow_always")
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "touch"))
        [asked] = client.requests_named("session/request_permission")
    options = asked["params"]["options"]
    assert_keys_do_what_they_say(options)
    for special in (False, True):
        hinted = zed_hints(options, allow_thread_special=special)["allow_always"]
        assert hinted["_meta"]["earshot"]["scope"] == "session"
    assert second.exists()  # the second call ran unasked: the session grant covered it
    assert not (agent_env.config_home / "earshot" / "projects").exists()


async def test_the_first_tool_call_has_its_real_kind_and_the_exact_command(
    agent_env: AgentEnv,
) -> None:
    """`ToolCall::from_acp`: the label of a call first announced as `execute` is plain text
    (`Markdown::new_text`), of any other kind Markdown, and an update cannot change that: a
    command first announced as `other` loses its `*`, backslashes and inline HTML. So the
    first `tool_call` has the real kind and, for a command, the command itself as its title."""
    command = r'printf "%s\n" a*b*c \*x\* "<b>bold</b>" | cat'
    agent_env.script(
        [{"tool_calls": [bash_call(command, description="Print a pattern")]}, {"text": "ok"}],
        mode="yolo",
    )
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "print"))
        first = call_updates(client, session_id, "call-bash")[0]
    assert first["sessionUpdate"] == "tool_call"
    assert first["kind"] == "execute"
    assert first["title"] == f"{command}  # Print a pattern"
    assert first["rawInput"]["command"] == command


@linux_sandbox
async def test_the_terminal_card_shows_the_users_command(agent_env: AgentEnv) -> None:
    """`AcpThread::create_terminal` labels the terminal card `format!("{} {}", command,
    args.join(" "))`, and `ToolCall::update_fields` relabels a command's terminals with the
    call's title: both read as the user's command, not the sandbox's command line (its
    kilobytes of `env -u ... bwrap ...` are in the launcher)."""
    command = "echo from-the-sandbox"
    agent_env.script([{"tool_calls": [bash_call(command)]}, {"text": "ok"}], mode="yolo")
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "run"))
        [create] = client.requests_named("terminal/create")
        updates = call_updates(client, session_id, "call-bash")
    params = create["params"]
    label = f"{params['command']} {' '.join(params['args'])}"
    assert label.endswith(f"/sandbox {command}") and len(label) < 300
    assert "bwrap" not in label
    embedding = next(
        u for u in updates if {"type": "terminal", "terminalId": "term-1"} in u.get("content", [])
    )
    assert {"type": "terminal", "terminalId": "term-1"} in embedding["content"]
    assert embedding["title"] == command


@linux_sandbox
async def test_no_update_names_a_released_terminal(agent_env: AgentEnv, outside: Path) -> None:
    """`AcpThread::release_terminal` forgets the terminal, and `ToolCall::update_fields` fails a
    whole update whose content names a terminal it does not know (`ToolCallContent::from_acp`:
    "Terminal not found"), dropping its `rawOutput` and `locations`. So the final update of a
    shell call goes out before `terminal/release`, and a command the sandbox stopped keeps its
    terminal while the user is asked whether to run it outside."""
    target = outside / "f"
    agent_env.script(
        [
            {"tool_calls": [bash_call("echo one; exit 3", call_id="plain")]},
            {"tool_calls": [bash_call(f"echo x > {target}", call_id="stopped")]},
            {"text": "ok"},
        ],
        mode="yolo",
    )
    async with open_agent(agent_env) as client:
        client.handlers["session/request_permission"] = pick("allow_once")  # run it outside
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "run"))
    released: set[str] = set()
    finals: dict[str, int] = {}
    for index, message in enumerate(client.messages):
        method = message.get("method")
        if method == "terminal/release":
            released.add(message["params"]["terminalId"])
            continue
        if method == "session/update":
            shown = message["params"]["update"]
            if shown["sessionUpdate"] not in ("tool_call", "tool_call_update"):
                continue
        elif method == "session/request_permission":
            shown = message["params"]["toolCall"]
        else:
            continue
        content: list[Json] = shown.get("content") or []
        for item in content:
            assert item.get("terminalId") not in released, (index, shown)
        if shown.get("status") in ("completed", "failed"):
            finals[shown["toolCallId"]] = index
    assert released == {"term-1", "term-2", "term-3"}
    release_at = {
        m["params"]["terminalId"]: i
        for i, m in enumerate(client.messages)
        if m.get("method") == "terminal/release"
    }
    assert finals["plain"] < release_at["term-1"]
    assert finals["stopped"] < min(release_at["term-2"], release_at["term-3"])
    assert target.read_text(encoding="utf-8") == "x\n"


async def test_one_diff_per_edit_live_and_on_load(agent_env: AgentEnv) -> None:
    """`render_markdown_output`: a text block is rendered as Markdown, so an edit's unified-diff
    result text became a second, garbled diff (`-`/`+` lines as bullet lists) under the real
    one. A successful edit shows its diff content only, live and when the session is loaded."""
    target = agent_env.workspace / "notes.txt"
    target.write_text("one\ntwo\nthree\n", encoding="utf-8")
    agent_env.script(
        [
            {"tool_calls": [{"name": "read", "id": "r", "arguments": {"path": str(target)}}]},
            {
                "tool_calls": [
                    {
                        "name": "edit",
                        "id": "e",
                        "arguments": {"path": str(target), "old_string": "two", "new_string": "2"},
                    },
                    write_call(str(agent_env.workspace / "new.txt"), "fresh\n", call_id="w"),
                ]
            },
            {"text": "ok"},
        ],
        mode="yolo",
    )

    def one_diff(update: Json) -> None:
        kinds = [item["type"] for item in update["content"]]
        assert kinds == ["diff"], update["content"]
        assert update["rawOutput"]["output"].startswith(("Edited", "Created", "Wrote"))

    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "edit"))
        for call_id in ("e", "w"):
            one_diff(call_updates(client, session_id, call_id)[-1])
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        await client.call(
            "session/load",
            {"sessionId": session_id, "cwd": str(agent_env.workspace), "mcpServers": []},
        )
        for call_id in ("e", "w"):
            [replayed] = call_updates(client, session_id, call_id)
            one_diff(replayed)


async def test_an_mcp_prompt_says_what_the_call_does_with_which_arguments(
    agent_env: AgentEnv,
) -> None:
    """The permission card shows `rawInput` only behind a collapsed "View Raw Input"
    (`markdown_for_raw_output`): an MCP call's title names its arguments and a content block
    lists them, bounded, with a secret-looking one masked and a key-shaped value never shown."""
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
    arguments = {"text": "hello there", "api_key": secret, "note": f"use {secret}"}
    agent_env.script(
        [
            {"tool_calls": [{"name": "mcp__demo__shout", "id": "m", "arguments": arguments}]},
            {"text": "ok"},
        ],
        # The demo server imports the MCP SDK: a hang detector, so the first request has its tool.
        extra={"mcp": {"startupWait": 120, "startupTimeout": 120}},
    )
    demo = {"name": "demo", "command": sys.executable, "args": [str(DEMO_SERVER)], "env": []}

    async def reject(client: AcpClient, params: Json) -> Json:
        option = next(o for o in params["options"] if o["kind"] == "reject_once")
        return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}

    async with open_agent(agent_env) as client:
        client.handlers["session/request_permission"] = reject
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env, mcpServers=[demo]))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "shout"))
        [asked] = client.requests_named("session/request_permission")
    tool_call = asked["params"]["toolCall"]
    assert tool_call["title"].startswith('shout (demo): text="hello there", api_key="[redacted]"')
    block = tool_call["content"][0]["content"]["text"]
    assert block.startswith("With these arguments:\n\n```json\n")
    assert '"text": "hello there"' in block and '"api_key": "[redacted]"' in block
    assert secret not in json.dumps(tool_call["title"]) + block
    assert_keys_do_what_they_say(asked["params"]["options"])


async def test_locations_are_one_based_as_the_schema_says(agent_env: AgentEnv) -> None:
    """`ToolCall::resolve_location` reads `locations[].line` as a 0-based row
    (`Point::new(row, ...)`), but the schema says "Optional 1-based line number within the
    file": earshot follows the schema (Zed then lands one line below; editors/zed/README.md)."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    line = schema["$defs"]["ToolCallLocation"]["properties"]["line"]
    assert line["description"] == "Optional 1-based line number within the file."
    target = agent_env.workspace / "notes.txt"
    target.write_text("one\ntwo\nthree\n", encoding="utf-8")
    agent_env.script(
        [
            {"tool_calls": [{"name": "read", "id": "r", "arguments": {"path": str(target)}}]},
            {
                "tool_calls": [
                    {
                        "name": "edit",
                        "id": "e",
                        "arguments": {
                            "path": str(target),
                            "old_string": "three",
                            "new_string": "3",
                        },
                    }
                ]
            },
            {"text": "ok"},
        ],
        mode="yolo",
    )
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "edit"))
        edit = call_updates(client, session_id, "e")[-1]
        read = call_updates(client, session_id, "r")[-1]
    assert edit["locations"] == [{"path": str(target), "line": 3}]  # "three" is line 3
    assert read["locations"] == [{"path": str(target), "line": 1}]
