"""`earshot eval`: the shipped task set passes with its scripted solutions and fails with its
scripted wrong answers, through the real CLI (`earshot eval` and, inside it, `earshot -p`); a run
that hangs is stopped; bad task sets are refused; and the Ray fan-out, when Ray is installed."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from earshot.evals.report import render_table, summary
from earshot.evals.runner import TaskResult, run_task
from earshot.evals.tasks import TaskError, load_tasks, payload
from tests.earshot.support import Env, earshot, make_env

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "evals" / "tasks"
EVAL_SECONDS = 120.0
SLOW_TEST_SECONDS = 150
"""Ten runs of `earshot -p` (or a Ray instance starting) on a loaded 2-core machine."""

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the checks run in the real sandbox"
)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


async def _eval(env: Env, *args: str) -> tuple[int, dict[str, Any], str]:
    with anyio.fail_after(EVAL_SECONDS):
        done = await anyio.run_process(
            [sys.executable, "-m", "earshot", "eval", str(TASKS), "--json", *args],
            cwd=env.workspace,
            env=env.environ(),
            check=False,
        )
    return done.returncode, json.loads(done.stdout), done.stderr.decode(errors="replace")


def test_the_shipped_task_set() -> None:
    tasks = load_tasks(TASKS)
    assert len(tasks) == 10
    languages = {task.language for task in tasks}
    assert languages == {"python", "javascript"}
    assert {task.mode for task in tasks} >= {"accept-edits", "auto"}
    for task in tasks:
        for script in ("solution", "wrong"):
            assert (task.directory / f"{script}.json").is_file(), (task.name, script)


@pytest.mark.timeout(SLOW_TEST_SECONDS)
async def test_scripted_solutions_pass_every_task(env: Env) -> None:
    code, report, stderr = await _eval(env, "--scripted", "solution", "--jobs", "2")
    failed = [task for task in report["tasks"] if not task["passed"]]
    if code != 0:  # the whole report of each failed task (an assert message would be cut)
        pytest.fail(json.dumps({"stderr": stderr, "failed": failed}, indent=1))
    summary = report["summary"]
    assert (summary["tasks"], summary["passed"], summary["pass_rate"]) == (10, 10, 1.0)
    assert report["model"] == "scripted:solution"
    for task in report["tasks"]:
        assert task["passed"] and task["error"] is None, task
        assert task["agent_exit_code"] == 0 and task["stop_reason"] == "end_turn"
        assert task["check_exit_code"] == 0 and task["check_sandbox"] == "confined"
        assert task["turns"] >= 3 and task["usage"]["input_tokens"] > 0
        assert task["session_id"] and task["workdir"] is None
    assert summary["turns"] == sum(task["turns"] for task in report["tasks"])
    # The scripted model has no price: the cost is unknown, never a made-up zero.
    assert summary["cost_usd"] is None


@pytest.mark.timeout(SLOW_TEST_SECONDS)
async def test_scripted_wrong_answers_fail_every_task(env: Env) -> None:
    code, report, stderr = await _eval(env, "--scripted", "wrong", "--jobs", "2")
    assert code == 1, stderr
    assert report["summary"]["passed"] == 0
    for task in report["tasks"]:
        # The agent finished; the check is what failed.
        assert not task["passed"] and task["error"] is None, task
        assert task["agent_exit_code"] == 0 and task["check_exit_code"] not in (0, None)


async def test_the_table_and_the_task_filter(env: Env) -> None:
    with anyio.fail_after(EVAL_SECONDS):
        done = await earshot(
            env, "eval", str(TASKS), "--scripted", "solution", "--only", "py-fix-failing-test"
        )
    assert done.code == 0, done.stderr
    header, row = done.stdout.splitlines()[:2]
    assert header.split()[:4] == ["task", "result", "turns", "tokens"]
    assert row.split()[:3] == ["py-fix-failing-test", "PASS", "3"]
    assert "1/1 passed (100%)" in done.stdout


def test_the_report_says_how_much_input_came_from_the_cache() -> None:
    results = [
        TaskResult(name="a", passed=True, usage={"input_tokens": 1000, "cached_input_tokens": 900}),
        TaskResult(
            name="b", passed=False, usage={"input_tokens": 3000, "cached_input_tokens": 2100}
        ),
    ]
    assert summary(results)["cache_read_share"] == 0.75
    out = io.StringIO()
    render_table(results, out, model="m")
    header, first = out.getvalue().splitlines()[:2]
    assert header.split()[5] == "cached" and first.split()[4] == "90%"
    assert "(75% read from the prompt cache)" in out.getvalue()


async def test_bad_task_sets_are_usage_errors(env: Env, tmp_path: Path) -> None:
    unknown = await earshot(env, "eval", str(TASKS), "--only", "no-such-task")
    assert unknown.code == 2 and "no-such-task" in unknown.stderr
    script = await earshot(env, "eval", str(TASKS), "--scripted", "nonexistent")
    assert script.code == 2 and "nonexistent.json" in script.stderr
    empty = await earshot(env, "eval", str(tmp_path))
    assert empty.code == 2 and "no task" in empty.stderr

    broken = tmp_path / "broken"
    (broken / "repo").mkdir(parents=True)
    (broken / "task.json").write_text(
        json.dumps({"prompt": "x", "check": "true", "mode": "anything"}), encoding="utf-8"
    )
    with pytest.raises(TaskError, match="mode"):
        load_tasks(broken)


def _hanging_task(root: Path) -> Path:
    task = root / "hangs"
    (task / "repo").mkdir(parents=True)
    (task / "repo" / "a.txt").write_text("a\n", encoding="utf-8")
    (task / "task.json").write_text(
        json.dumps({"prompt": "wait", "check": "true", "mode": "ask", "timeout": 2}),
        encoding="utf-8",
    )
    (task / "hang.json").write_text(
        json.dumps({"turns": [{"text": "thinking...", "hang": True}]}), encoding="utf-8"
    )
    return task


async def test_a_run_that_does_not_finish_is_stopped_and_reported(tmp_path: Path) -> None:
    [task] = load_tasks(_hanging_task(tmp_path))
    with anyio.fail_after(30):
        result = await run_task(payload(task, scripted="hang", keep=True))
    assert not result.passed and result.check_exit_code is None
    assert result.error == "the agent did not finish within 2s"
    assert result.workdir is not None and Path(result.workdir, "a.txt").is_file()


@pytest.mark.timeout(SLOW_TEST_SECONDS)
def test_ray_fans_the_tasks_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray", reason="Ray is an optional extra (pip install '.[ray]')")
    from earshot.evals.ray_backend import run_on_ray

    monkeypatch.setenv("HOME", str(tmp_path))  # Ray keeps a token under ~/.ray
    tasks = {task.name: task for task in load_tasks(TASKS)}
    payloads = [
        payload(tasks["py-fix-failing-test"], scripted="solution"),
        payload(tasks["js-fix-async-bug"], scripted="wrong"),
    ]
    seen: list[TaskResult] = []
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        results = run_on_ray(payloads, "local", on_result=seen.append)
    finally:
        ray.shutdown()
    assert [(r.name, r.passed) for r in results] == [
        ("py-fix-failing-test", True),
        ("js-fix-async-bug", False),
    ]
    assert sorted(r.name for r in seen) == sorted(r.name for r in results)
    assert results[0].turns == 3 and results[1].check_exit_code not in (0, None)
