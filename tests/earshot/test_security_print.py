"""The permission gate's critical classes in print mode that `test_gate_print` and
`test_print_mode_sandbox` leave out: in `auto`, a command whose write outside the project no
parser sees (the gate lets it run, the sandbox stops it, nothing can be asked headless), and a
command reading earshot's settings (an `apiKey`); both shown to work without the sandbox
(issue 12)."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.earshot.support import Env, earshot, make_env, text_reply, tool_messages, tool_reply
from tests.loopback import loopback

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the real sandbox tests run on Linux"
)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed; scripts/test installs it")
    return make_env(tmp_path)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the workspace and outside the temp dir (which commands may write)."""
    path = Path(tempfile.mkdtemp(prefix="earshot-outside-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


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
