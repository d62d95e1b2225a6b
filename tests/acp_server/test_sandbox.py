"""The command sandbox over ACP, as an editor drives it: the terminal is handed a launcher that
runs the sandbox's command line (the editor runs on the same machine), which also keeps the
editor's provider keys out, while the editor shows the user's command; a command the sandbox
stops asks the editor whether to run it outside, and only then."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
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
)
from tests.acp_server.editor import terminal_create
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.acp_server.test_tools import bash_call, call_updates

pytestmark = pytest.mark.skipif(
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


def terminal_command(create: dict[str, Any]) -> list[str]:
    return [create["params"]["command"], *create["params"]["args"]]


PEEK = "echo ENV; env; echo INIT; tr '\\0' '\\n' < /proc/1/environ; echo made > inside.txt"


@pytest.mark.parametrize("sandbox", [True, False])
async def test_the_editor_terminal_runs_the_sandbox_command_line(
    agent_env: AgentEnv, monkeypatch: pytest.MonkeyPatch, sandbox: bool
) -> None:
    # The editor's own environment has a provider key (its terminals inherit it).
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-editor-sentinel")
    agent_env.script(
        [{"tool_calls": [bash_call(PEEK)]}, {"text": "ok"}],
        mode="yolo",
        extra={"sandbox": {"enabled": sandbox}},
    )
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "run"))
        [create] = client.requests_named("terminal/create")
        command = terminal_command(create)
        output = bytes(client.terminals["term-1"].output).decode()
    assert (agent_env.workspace / "inside.txt").read_text(encoding="utf-8") == "made\n"
    if not sandbox:
        assert command == ["bash", "-c", PEEK]
        assert "sk-ant-editor-sentinel" in output  # what the sandbox's command line prevents
        return
    # The editor labels the terminal with `command` and `args`: a short launcher and the
    # user's command, not the kilobytes of `env -u ... bwrap ...` (it is in the launcher).
    launcher = Path(command[0])
    assert command == [str(launcher), PEEK]
    assert (
        launcher.name == "sandbox"
        and launcher.parent.parent == agent_env.data_home / "earshot" / "launchers"
    )
    assert not launcher.parent.exists()  # removed once run
    assert "sk-ant-editor-sentinel" not in output  # `env -u` ran first
    assert "bwrap" not in " ".join(command)


async def test_the_launcher_runs_what_it_holds_whatever_the_editor_shows(
    agent_env: AgentEnv, outside: Path
) -> None:
    """An editor that mangles or drops the launcher's argument (Toad runs a `command` with a
    space in it alone) changes what it shows, never what runs: the command is in the script."""
    target = outside / "f"
    agent_env.script(
        [{"tool_calls": [bash_call(f"echo x > {target}; echo made > inside.txt")]}, {"text": "ok"}],
        mode="yolo",
    )

    async def dropping_arguments(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
        return await terminal_create(client, {**params, "args": ["rm -rf ~"]})

    async with open_agent(agent_env) as client:
        client.handlers["terminal/create"] = dropping_arguments
        client.handlers["session/request_permission"] = keep_in_sandbox
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "go"))
    assert (agent_env.workspace / "inside.txt").read_text(encoding="utf-8") == "made\n"
    assert not target.exists()  # still confined


async def keep_in_sandbox(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
    option = next(o for o in params["options"] if o["kind"] == "reject_once")
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


async def test_a_stopped_terminal_command_asks_the_editor_to_run_it_outside(
    agent_env: AgentEnv, outside: Path
) -> None:
    target = outside / "f"
    agent_env.script(
        [{"tool_calls": [bash_call(f"echo x > {target}")]}, {"text": "ok"}], mode="yolo"
    )
    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        # The default answer is the first allow_once option: here, "run outside".
        await client.call("session/prompt", text_prompt(session_id, "write outside"))
        [request] = client.requests_named("session/request_permission")
        first, second = client.requests_named("terminal/create")
        updates = call_updates(client, session_id, "call-bash")
    tool_call = request["params"]["toolCall"]
    assert tool_call["toolCallId"] == "call-bash"
    # Titled with the exact command; the card keeps showing the stopped command's terminal
    # (still there: released after the call's final update), the command and what it risks.
    assert tool_call["title"].startswith(f"echo x > {target}  # ")
    terminal, command_block, warning = tool_call["content"]
    assert terminal == {"type": "terminal", "terminalId": "term-1"}
    assert f"```sh\necho x > {target}\n```" in command_block["content"]["text"]
    assert warning["content"]["text"].startswith("The sandbox stopped this command: ")
    assert "everything your user account can reach" in warning["content"]["text"]
    assert [(o["name"], o["kind"], o.get("_meta")) for o in request["params"]["options"]] == [
        (
            "Run it again OUTSIDE the sandbox, unconfined (this call only)",
            "allow_once",
            {"earshot": {"sandbox": "outside"}},
        ),
        ("Don't: keep it in the sandbox", "reject_once", None),
    ]
    assert Path(terminal_command(first)[0]).name == "sandbox"  # confined, through the launcher
    assert terminal_command(second) == ["bash", "-c", f"echo x > {target}"]  # the user said so
    assert target.read_text(encoding="utf-8") == "x\n"
    assert updates[-1]["status"] == "completed"
    assert updates[-1]["rawOutput"]["sandbox"] == "outside"


async def test_the_permission_prompt_never_offers_running_outside_the_sandbox(
    agent_env: AgentEnv, outside: Path
) -> None:
    """No plain "allow" can mean "outside the sandbox" (CodeCompanion's Accept took the last
    `allow_once`, which was that): the gate's prompt offers one option per kind and none runs
    outside; the sandbox's own question comes later, once it has stopped the command."""
    target = outside / "f"
    agent_env.script([{"tool_calls": [bash_call(f"echo x > {target}")]}, {"text": "ok"}])

    async with open_agent(agent_env) as client:
        await initialize(client, FULL_CAPABILITIES)
        session_id = (await new_session(client, agent_env))["sessionId"]
        await client.call("session/prompt", text_prompt(session_id, "write outside"))
        gate, sandbox = client.requests_named("session/request_permission")
        first, second = client.requests_named("terminal/create")
    options = gate["params"]["options"]
    kinds = [o["kind"] for o in options]
    assert kinds[:2] == ["allow_once", "reject_once"] and len(set(kinds)) == len(kinds)
    assert not any(o.get("_meta", {}).get("earshot", {}).get("sandbox") for o in options)
    assert Path(terminal_command(first)[0]).name == "sandbox"  # "allow once" ran it confined
    [outside_option] = [o for o in sandbox["params"]["options"] if o["kind"] == "allow_once"]
    assert outside_option["_meta"] == {"earshot": {"sandbox": "outside"}}
    assert terminal_command(second) == ["bash", "-c", f"echo x > {target}"]
    assert target.read_text(encoding="utf-8") == "x\n"


async def test_an_editor_terminal_reaches_no_socket_of_the_host(
    agent_env: AgentEnv, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A tmux server the user runs (its socket outside /tmp and the runtime dir) and a service on
    # an abstract socket: the sandbox's command line, run by the editor, reaches neither.
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed; scripts/test installs it")
    tmux = outside / "tmux.sock"
    abstract = f"\0earshot-test-{uuid.uuid4().hex}"
    service = socket.socket(socket.AF_UNIX)
    service.bind(abstract)
    service.listen(1)
    monkeypatch.setenv("TMUX", f"{tmux},1,0")
    attack = (
        f"tmux -S {tmux} run-shell 'touch {outside}/ran' && echo reached tmux; "
        f"python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('\\0{abstract[1:]}')\""
        " && echo reached abstract; echo [$TMUX]"
    )
    agent_env.script([{"tool_calls": [bash_call(attack)]}, {"text": "ok"}], mode="yolo")
    session = f"earshot-test-{uuid.uuid4().hex[:8]}"
    tmux_base = ["tmux", "-S", str(tmux), "-f", "/dev/null"]
    subprocess.run([*tmux_base, "new-session", "-d", "-s", session], check=True)
    try:
        async with open_agent(agent_env) as client:
            await initialize(client, FULL_CAPABILITIES)
            session_id = (await new_session(client, agent_env))["sessionId"]
            await client.call("session/prompt", text_prompt(session_id, "run"))
            [create] = client.requests_named("terminal/create")
            output = bytes(client.terminals["term-1"].output).decode()
        # The editor runs the launcher (it holds the nsenter + bwrap line and removes itself).
        assert Path(terminal_command(create)[0]).name == "sandbox"
        assert "reached" not in output, output
        assert "[]" in output
        assert not (outside / "ran").exists()
    finally:
        subprocess.run([*tmux_base, "kill-session", "-t", session], check=False)
        service.close()
