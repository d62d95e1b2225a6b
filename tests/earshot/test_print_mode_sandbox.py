"""The command sandbox end to end in print mode: `earshot -p` as a subprocess, a loopback model
that calls `bash`, the real sandbox. Nothing can be asked headless, so a command the sandbox
stops stays stopped."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.earshot.sandbox_fixtures import env as env
from tests.earshot.sandbox_fixtures import linux_only
from tests.earshot.sandbox_fixtures import outside as outside
from tests.earshot.support import Env, earshot, text_reply, tool_messages, tool_reply
from tests.loopback import loopback

pytestmark = linux_only


def settings(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "local/test-model",
        "providers": {
            "local": {"api": "openai-chat", "baseUrl": f"{url}/v1", "apiKey": "test-key"},
            # Never called: its key variable must be scrubbed like a built-in provider's.
            "lab": {
                "api": "openai-chat",
                "baseUrl": "http://127.0.0.1:9/v1",
                "apiKeyEnv": "LAB_KEY",
            },
        },
        **extra,
    }


def bash_result(request_body: dict[str, Any]) -> str:
    [message] = tool_messages(request_body)
    return json.dumps(message["content"])


PEEK = "echo ENV; env; echo PROC; tr '\\0' '\\n' < /proc/$PPID/environ"


@pytest.mark.parametrize("sandbox", [True, False])
async def test_a_command_cannot_read_earshots_environment(env: Env, sandbox: bool) -> None:
    keys = {"ANTHROPIC_API_KEY": "sk-ant-sentinel-one", "LAB_KEY": "sentinel-two"}
    with loopback(tool_reply(("call_1", "bash", {"command": PEEK})), text_reply("ok")) as server:
        env.write_settings(settings(server.url, mode="auto", sandbox={"enabled": sandbox}))
        # Cold: the test reads earshot's `/proc/PID/environ`, the environment it was started with.
        run = await earshot(env, "-p", "look", extra_env=keys, cold=True)
    assert run.code == 0, run.stderr
    result = bash_result(server.requests[1].json())
    environment, _, parent = result.partition("PROC")
    # The command's own environment never has a provider key, configured ones included.
    assert "sentinel" not in environment
    if sandbox:
        assert "sentinel" not in parent  # its parent is the sandbox's init, not earshot
    else:
        # Without the sandbox, the parent is earshot, and its environment is readable.
        assert "sk-ant-sentinel-one" in parent
        assert "sentinel-two" in parent


async def test_a_stopped_command_stays_stopped_headless(env: Env, outside: Path) -> None:
    command = f"cp notes.txt {outside}/copied"
    (env.workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    with loopback(tool_reply(("call_1", "bash", {"command": command})), text_reply("ok")) as server:
        env.write_settings(settings(server.url))
        run = await earshot(env, "--permission-mode", "yolo", "-p", "copy it out")
    assert run.code == 0, run.stderr
    result = bash_result(server.requests[1].json())
    assert "Read-only file system" in result
    assert "The sandbox stopped this command" in result
    assert "The user did not approve running it outside the sandbox" in result
    assert not (outside / "copied").exists()


async def test_auto_mode_writes_inside_the_project(env: Env) -> None:
    command = "mkdir -p build && echo built > build/out.txt && git init -q repo"
    with loopback(tool_reply(("call_1", "bash", {"command": command})), text_reply("ok")) as server:
        env.write_settings(settings(server.url, mode="auto"))
        run = await earshot(env, "-p", "build")
    assert run.code == 0, run.stderr
    assert (env.workspace / "build" / "out.txt").read_text(encoding="utf-8") == "built\n"
    assert (env.workspace / "repo" / ".git").is_dir()  # a new nested repository is the model's own
    assert not (env.workspace / ".earshot").exists()  # no placeholder left behind


async def test_no_door_to_the_host_in_print_mode(
    env: Env, outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The user runs earshot inside tmux (its socket outside /tmp and the runtime dir) and keeps
    # another checkout in the host's /tmp: the model reaches neither.
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed; scripts/test installs it")
    tmux = outside / "tmux.sock"
    checkout = tmp_path / "other-project"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    command = (
        f"tmux run-shell 'touch {outside}/ran'; tmux -S {tmux} run-shell 'touch {outside}/ran'; "
        f"echo '[core] fsmonitor = touch {outside}/ran' >> {checkout}/.git/config"
    )
    session = f"earshot-test-{uuid.uuid4().hex[:8]}"
    base = ["tmux", "-S", str(tmux), "-f", "/dev/null"]
    subprocess.run([*base, "new-session", "-d", "-s", session], check=True)
    try:
        with loopback(tool_reply(("call_1", "bash", {"command": command})), text_reply("ok")) as s:
            env.write_settings(settings(s.url))
            run = await earshot(
                env, "--permission-mode", "yolo", "-p", "go", extra_env={"TMUX": f"{tmux},1,0"}
            )
    finally:
        subprocess.run([*base, "kill-session", "-t", session], check=False)
    assert run.code == 0, run.stderr
    assert "call_1" in json.dumps(s.requests[1].json())
    assert not (outside / "ran").exists()
    assert (checkout / ".git" / "config").read_text(encoding="utf-8") == "[core]\n"
