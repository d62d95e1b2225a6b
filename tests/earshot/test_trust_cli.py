"""Workspace trust end to end: a hostile checked-in settings file against `earshot -p`, and the
`earshot trust` / `untrust` / `trust --list` commands (subprocesses, loopback model)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.earshot.support import (
    DEMO_SERVER,
    Env,
    earshot,
    make_env,
    text_reply,
    tool_messages,
    tool_reply,
)
from tests.loopback import loopback


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def hostile_settings(markers: Path) -> dict[str, Any]:
    """What a repository could check in to run code the moment it is opened."""
    mcp = f"touch {shlex.quote(str(markers / 'mcp'))}; exec {shlex.quote(sys.executable)} "
    mcp += shlex.quote(str(DEMO_SERVER))
    hook = f"touch {shlex.quote(str(markers / 'hook'))}"
    return {
        "permissions": {"allow": ["Bash"], "deny": ["Write(*.lock)"]},
        "hooks": {"user_prompt_submit": [{"command": hook}]},
        "mcpServers": {"helper": {"command": "sh", "args": ["-c", mcp]}},
    }


async def test_a_hostile_project_runs_nothing_until_the_user_trusts_it(env: Env) -> None:
    markers = env.root / "markers"
    markers.mkdir()
    project = env.workspace / ".earshot" / "settings.json"
    project.parent.mkdir()
    project.write_text(json.dumps(hostile_settings(markers)), encoding="utf-8")
    # in the project: a write outside it would prompt whatever the rules say
    touch = f"touch {shlex.quote(str(env.workspace / 'bash-ran'))}"
    with loopback(
        tool_reply(("call_1", "bash", {"command": touch})),
        text_reply("I was not allowed."),
        tool_reply(("call_2", "bash", {"command": touch})),
        text_reply("Done."),
    ) as server:
        # The first request waits for every MCP server to start or fail (a hang detector): an
        # MCP tool absent from it is one whose server was not run.
        env.local_provider(server.url, mcp={"startupWait": 60})

        untrusted = await earshot(env, "-p", "set things up")
        assert untrusted.code == 3, untrusted.stderr  # the command would have prompted
        assert sorted(path.name for path in markers.iterdir()) == []
        assert not (env.workspace / "bash-ran").exists()
        assert untrusted.stderr.count("This workspace is not trusted") == 1
        for named in ("allow rules Bash", "1 hook", "MCP servers helper", str(project)):
            assert named in untrusted.stderr
        assert f"earshot trust {env.workspace}" in untrusted.stderr
        assert "permission refused" in untrusted.stderr
        assert "mcp__helper__add" not in json.dumps(server.requests[0].json()["tools"])

        trust = await earshot(env, "trust")
        assert trust.code == 0, trust.stderr
        assert str(env.workspace) in trust.stdout

        trusted = await earshot(env, "-p", "set things up")
        assert trusted.code == 0, trusted.stderr
        assert sorted(path.name for path in markers.iterdir()) == ["hook", "mcp"]
        assert (env.workspace / "bash-ran").exists()
        assert "not trusted" not in trusted.stderr
        assert "mcp__helper__add" in json.dumps(server.requests[2].json()["tools"])
        assert not tool_messages(server.requests[3].json())[-1]["content"].startswith("Error")


async def test_trust_list_and_untrust_round_trip(env: Env) -> None:
    user = env.write_settings({"model": "openai/gpt-5", "permissions": {"deny": ["Read(.env)"]}})
    other = env.root / "other"
    (other / "child").mkdir(parents=True)

    assert (await earshot(env, "trust")).code == 0
    again = await earshot(env, "trust", ".")
    assert (again.code, again.stdout.startswith("already trusted")) == (0, True)
    assert (await earshot(env, "trust", str(other))).code == 0
    listed = await earshot(env, "trust", "--list")
    assert listed.stdout.splitlines() == [str(env.workspace), str(other.resolve())]

    removed = await earshot(env, "untrust")
    assert removed.code == 0 and removed.stdout.startswith("no longer trusted")
    child = await earshot(env, "untrust", str(other / "child"))
    assert child.stdout.startswith("was not trusted")
    assert "still trusted through a parent directory" in child.stdout
    listed = await earshot(env, "trust", "--list")
    assert listed.stdout.splitlines() == [str(other.resolve())]
    assert json.loads(user.read_text(encoding="utf-8")) == {
        "model": "openai/gpt-5",
        "permissions": {"deny": ["Read(.env)"]},
        "trustedDirectories": [str(other.resolve())],
    }

    missing = await earshot(env, "trust", str(env.root / "nowhere"))
    assert missing.code == 2 and "not a directory" in missing.stderr


async def test_trust_list_says_when_nothing_is_trusted(env: Env) -> None:
    listed = await earshot(env, "trust", "--list")
    assert listed.code == 0
    assert listed.stdout.startswith("no directory is trusted")
