from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from agent.settings.scopes import HookRule, HookSettings, HooksSettings
from agent.turn.hooks import HookRunner, HookVerdict, matches
from tests.processes import until_gone


def rule(event: str, command: str, *, matcher: str | None = None, timeout: float | None = None):
    return HookRule(
        event=event,  # pyright: ignore[reportArgumentType]
        command=command,
        matcher=matcher,
        timeout=timeout,
        scope="project",
        source=Path("/nowhere/settings.json"),
    )


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/usr/bin/env bash\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return str(path)


async def pre(runner: HookRunner, tool: str = "bash") -> HookVerdict:
    return await runner.pre_tool_use(
        session_id="s1", tool_name=tool, tool_input={"command": "ls"}, call_id="c1"
    )


async def test_exit_2_blocks_with_the_stderr_reason(tmp_path: Path) -> None:
    guard = script(tmp_path, "guard.sh", 'cat > /dev/null\necho "no rm here" >&2\nexit 2\n')
    runner = HookRunner((rule("pre_tool_use", guard),), cwd=tmp_path)
    assert await pre(runner) == HookVerdict(blocked=True, reason="no rm here")


async def test_json_block_decision_blocks(tmp_path: Path) -> None:
    command = 'echo \'{"decision": "block", "reason": "policy says no"}\''
    runner = HookRunner((rule("pre_tool_use", command),), cwd=tmp_path)
    assert await pre(runner) == HookVerdict(blocked=True, reason="policy says no")


async def test_a_hook_cannot_approve(tmp_path: Path) -> None:
    command = 'echo \'{"decision": "approve", "reason": "trust me"}\''
    runner = HookRunner((rule("pre_tool_use", command),), cwd=tmp_path)
    verdict = await pre(runner)
    assert verdict == HookVerdict(blocked=False, reason=None)
    assert not hasattr(verdict, "allowed")


async def test_the_hook_reads_a_json_description_on_stdin_in_the_cwd(tmp_path: Path) -> None:
    out = tmp_path / "seen.json"
    command = f'cat > {out}; pwd > {out}.cwd; echo "$EARSHOT_HOOK" > {out}.name'
    runner = HookRunner((rule("pre_tool_use", command),), cwd=tmp_path)
    assert not (await pre(runner)).blocked
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert seen == {
        "hook": "pre_tool_use",
        "session_id": "s1",
        "cwd": str(tmp_path),
        "tool_name": "bash",
        "tool_input": {"command": "ls"},
        "call_id": "c1",
    }
    assert Path(f"{out}.cwd").read_text(encoding="utf-8").strip() == str(tmp_path)
    assert Path(f"{out}.name").read_text(encoding="utf-8").strip() == "pre_tool_use"


async def test_a_timed_out_pre_hook_blocks_and_its_process_group_is_killed(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    # the hook starts a grandchild that would outlive a kill of bash alone
    command = f"sleep 30 & echo $! > {marker}; wait"
    runner = HookRunner((rule("pre_tool_use", command, timeout=0.5),), cwd=tmp_path)
    # A hang detector, not a speed limit: a hook the timeout did not stop would run for 30 s.
    with anyio.fail_after(25):
        verdict = await pre(runner)
    assert verdict.blocked
    assert verdict.reason is not None and "timed out" in verdict.reason
    child = int(marker.read_text(encoding="utf-8"))
    await until_gone([child], deadline=25)  # below the grandchild's 30 s


async def test_a_crashing_pre_hook_continues_but_reports_the_failure(tmp_path: Path) -> None:
    runner = HookRunner((rule("pre_tool_use", "echo boom >&2; exit 1"),), cwd=tmp_path)
    verdict = await pre(runner)
    assert not verdict.blocked
    assert verdict.reason is not None
    assert "exited with 1" in verdict.reason and "boom" in verdict.reason


async def test_garbage_output_is_ignored(tmp_path: Path) -> None:
    runner = HookRunner(
        (rule("pre_tool_use", "head -c 100000 /dev/urandom; echo '{not json'"),), cwd=tmp_path
    )
    assert await pre(runner) == HookVerdict()


async def test_a_huge_reason_is_capped(tmp_path: Path) -> None:
    runner = HookRunner(
        (rule("pre_tool_use", "printf 'x%.0s' $(seq 10000) >&2; exit 2"),), cwd=tmp_path
    )
    verdict = await pre(runner)
    assert verdict.blocked and verdict.reason is not None
    assert len(verdict.reason) <= 2000


@dataclass(frozen=True)
class MatcherCase:
    matcher: str | None
    tool: str
    selected: bool


MATCHER_CASES = [
    MatcherCase(None, "bash", True),
    MatcherCase("", "edit", True),
    MatcherCase("*", "mcp__git__status", True),
    MatcherCase("Bash", "bash", True),
    MatcherCase("Bash", "edit", False),
    MatcherCase("Edit|Write", "write", True),
    MatcherCase("Edit|Write", "bash", False),
    MatcherCase("mcp__git__*", "mcp__git__status", True),
    MatcherCase("mcp__git__*", "mcp__github__status", False),
    MatcherCase("mcp__git", "mcp__git__status", True),
    MatcherCase("mcp__git", "mcp__github__status", False),
]


@pytest.mark.parametrize("case", MATCHER_CASES, ids=lambda c: f"{c.matcher}-{c.tool}")
def test_matcher_table(case: MatcherCase) -> None:
    assert matches(case.matcher, case.tool) is case.selected


async def test_only_matching_pre_hooks_run(tmp_path: Path) -> None:
    runner = HookRunner(
        (
            rule("pre_tool_use", "echo 'edit guard' >&2; exit 2", matcher="Edit|Write"),
            rule("pre_tool_use", "echo 'bash guard' >&2; exit 2", matcher="Bash"),
        ),
        cwd=tmp_path,
    )
    assert await pre(runner, "write") == HookVerdict(True, "edit guard")
    assert await pre(runner, "bash") == HookVerdict(True, "bash guard")
    assert await pre(runner, "read") == HookVerdict()


async def test_prompt_hook_blocks_and_sees_the_prompt(tmp_path: Path) -> None:
    command = 'grep -q secret && { echo "no secrets" >&2; exit 2; }; exit 0'
    runner = HookRunner((rule("user_prompt_submit", command),), cwd=tmp_path)
    assert await runner.user_prompt_submit(session_id="s", prompt="the secret is 42") == (
        HookVerdict(True, "no secrets")
    )
    assert await runner.user_prompt_submit(session_id="s", prompt="hello") == HookVerdict()


async def test_post_and_stop_hooks_run_and_their_failures_do_not_raise(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    runner = HookRunner(
        (
            rule("post_tool_use", f"cat >> {log}; echo >> {log}"),
            rule("post_tool_use", "exit 2"),
            rule("stop", f"cat >> {log}; echo >> {log}"),
            rule("stop", "sleep 30", timeout=0.2),
        ),
        cwd=tmp_path,
    )
    await runner.post_tool_use(
        session_id="s", tool_name="bash", tool_input={}, call_id="c", result="ok", is_error=False
    )
    await runner.stop(session_id="s", reason="end_turn")
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    assert [(e["hook"], e.get("result"), e.get("reason")) for e in events] == [
        ("post_tool_use", "ok", None),
        ("stop", None, "end_turn"),
    ]


async def test_settings_file_shape_is_accepted(tmp_path: Path) -> None:
    hooks = HooksSettings.model_validate(
        {"pre_tool_use": [{"matcher": "Bash", "command": "echo nope >&2; exit 2"}]}
    )
    runner = HookRunner(hooks, cwd=tmp_path)
    assert await pre(runner) == HookVerdict(True, "nope")
    assert HookSettings(command="x").matcher is None


async def test_no_hooks_is_a_no_op(tmp_path: Path) -> None:
    runner = HookRunner(None, cwd=tmp_path)
    assert await pre(runner) == HookVerdict()
