"""The permission gate's critical classes in print mode that `test_gate_print` and
`test_print_mode_sandbox` leave out: in `auto`, a command whose write outside the project no
parser sees (the gate lets it run, the sandbox stops it, nothing can be asked headless), and a
command reading earshot's settings (an `apiKey`); both shown to work without the sandbox
(issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.earshot.sandbox_fixtures import env as env
from tests.earshot.sandbox_fixtures import linux_only
from tests.earshot.sandbox_fixtures import outside as outside
from tests.earshot.support import Env, earshot, text_reply, tool_messages, tool_reply
from tests.loopback import loopback

pytestmark = linux_only


@pytest.mark.parametrize("sandbox", [True, False])
async def test_commands_in_auto_write_nothing_outside_and_read_no_settings(
    env: Env, outside: Path, sandbox: bool
) -> None:
    target = outside / "planted"
    write = f"python3 -c \"open('{target}', 'w').write('x')\""
    peek = f"cat {env.config_home}/earshot/settings.json"
    with loopback(
        tool_reply(("c1", "bash", {"command": write}), ("c2", "bash", {"command": peek})),
        text_reply("done"),
    ) as server:
        env.local_provider(server.url, mode="auto", sandbox={"enabled": sandbox})
        run = await earshot(env, "-p", "go")
        results = [json.dumps(m["content"]) for m in tool_messages(server.requests[1].json())]
    assert run.code == 0, run.stderr
    if sandbox:
        assert not target.exists()
        assert "The sandbox stopped this command" in results[0]
        assert "The user did not approve running it outside the sandbox" in results[0]
        assert "test-key" not in results[1]  # earshot's config dir is hidden from commands
    else:
        # What the sandbox prevents: `auto` runs both, and both do what they say.
        assert target.read_text(encoding="utf-8") == "x"
        assert "test-key" in results[1]
