"""Issue 24, item 1, end to end: the symlink race through print mode (a real `earshot -p`
process, a model on a loopback server) and over ACP (an editor with `fs` and terminals, in
memory, the scripted model), with a flipper process swapping the links all along. One
assistant message asks for many reads of `ssh_flip/id_ed25519` (a link flipping between the
project and `~/.ssh`) and writes to `flip/` (flipping between the project and `$HOME`): no key
may reach what the model or the editor is sent, nothing may land in `$HOME`, and the writes that
were allowed land in the project.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp_server.client import FULL_CAPABILITIES, AcpClient, initialize, open_agent
from tests.acp_server.env import make_env as make_agent_env
from tests.acp_server.test_sessions import new_session, text_prompt
from tests.earshot.support import earshot, make_env, text_reply, tool_messages, tool_reply
from tests.loopback import loopback
from tests.security.races import SECRET_KEY, flipping

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the races are run on Linux"
)

CALLS = 30


def lab_in(workspace: Path, home: Path) -> tuple[Path, Path]:
    """`real/` in the project, `~/.ssh` with a key, `~/.bashrc`; returns (real, ssh)."""
    real = workspace / "real"
    real.mkdir()
    (real / "id_ed25519").write_text("a harmless file\n", encoding="utf-8")
    ssh = home / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text(SECRET_KEY + "\n", encoding="utf-8")
    (home / ".bashrc").write_text("# the user's own\n", encoding="utf-8")
    return real, ssh


def calls() -> list[tuple[str, str, dict[str, Any]]]:
    made: list[tuple[str, str, dict[str, Any]]] = []
    for index in range(CALLS):
        made.append((f"r{index}", "read", {"path": "ssh_flip/id_ed25519"}))
        made.append((f"w{index}", "write", {"path": f"flip/tt{index}.txt", "content": "x\n"}))
    return made


def home_files(home: Path) -> list[str]:
    return sorted(str(path.relative_to(home)) for path in home.rglob("*"))


async def test_the_race_through_print_mode(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    real, ssh = lab_in(env.workspace, env.home)
    before = home_files(env.home)
    with loopback(tool_reply(*calls()), text_reply("done")) as server:
        env.local_provider(server.url, mode="auto", sandbox={"enabled": False})
        with (
            flipping(env.workspace / "ssh_flip", real, ssh),
            flipping(env.workspace / "flip", real, env.home),
        ):
            run = await earshot(env, "-p", "go")
        sent = json.dumps(tool_messages(server.requests[1].json()))
    assert run.code in (0, 3), run.stderr  # 3: calls were refused (a write that led outside)
    assert SECRET_KEY not in sent
    assert SECRET_KEY not in run.stdout + run.stderr
    assert home_files(env.home) == before
    assert "a harmless file" in sent  # the reads that were allowed happened
    assert any(real.glob("tt*.txt"))


async def refuse(client: AcpClient, params: dict[str, Any]) -> dict[str, Any]:
    option = next(o for o in params["options"] if o["kind"] == "reject_once")
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


async def test_the_race_over_acp(tmp_path: Path) -> None:
    env = make_agent_env(tmp_path)
    home = env.root / "home"
    real, ssh = lab_in(env.workspace, home)
    before = home_files(home)
    script = [{"id": call_id, "name": name, "arguments": args} for call_id, name, args in calls()]
    env.script([{"tool_calls": script}, {"text": "done"}], mode="auto")
    async with open_agent(env) as client:
        client.handlers["session/request_permission"] = refuse  # the user says no
        await initialize(client, FULL_CAPABILITIES)  # reads and writes through the editor
        session_id = (await new_session(client, env))["sessionId"]
        with (
            flipping(env.workspace / "ssh_flip", real, ssh),
            flipping(env.workspace / "flip", real, home),
        ):
            result = await client.call("session/prompt", text_prompt(session_id, "go"))
    assert result["stopReason"] == "end_turn"
    sent = json.dumps(client.messages)
    assert SECRET_KEY not in sent
    assert home_files(home) == before
    assert "a harmless file" in sent
    assert all(Path(path).parent == real for path in client.files_written)
    assert client.files_written  # the editor wrote the allowed ones
