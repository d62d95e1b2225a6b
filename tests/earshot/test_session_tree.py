"""The session tree from the command line: `-p --fork ID`, `-p /rewind N`, `sessions tree ID`
and `sessions show ID --branch B`, in process against a scripted model."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import anyio

from earshot.session_tree import sessions_show_branch, sessions_tree
from tests.earshot.support import Env
from tests.earshot.test_print_commands import env as env
from tests.earshot.test_print_commands import run, session_id, stored


def _script(env: Env, turns: list[dict[str, object]]) -> None:
    path = env.root / "script.json"
    path.write_text(json.dumps({"turns": turns}), encoding="utf-8")
    env.write_settings(
        {
            "providers": {"scripted-test": {"api": "scripted", "script": str(path)}},
            "model": "scripted-test/anything",
        }
    )


def _tree(session: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert anyio.run(lambda: sessions_tree(session, out=out, err=err)) == 0, err.getvalue()
    return out.getvalue()


def _show(session: str, branch: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = anyio.run(lambda: sessions_show_branch(session, branch, out=out, err=err))
    return code, out.getvalue(), err.getvalue()


def test_fork_continues_from_a_copy_and_the_tree_shows_branches_children_and_forks(
    env: Env,
) -> None:
    task = {
        "id": "task_1",
        "name": "task",
        "arguments": {"description": "Look", "prompt": "Peek at the project"},
    }
    # Every run plays its script from the start.
    _script(env, [{"text": "one done"}])
    code, err, first = run(env, "one")
    assert code == 0, err
    source = session_id(first)
    _script(env, [{"tool_calls": [task]}, {"text": "the child saw nothing"}, {"text": "two done"}])
    assert run(env, "two", resume=source)[0] == 0
    code, err, rewound = run(env, "/rewind 2", resume=source)
    assert code == 0, err
    assert "Rewound to before message 2" in rewound[-1]["text"]
    _script(env, [{"text": "rewound, three done"}])
    assert run(env, "three", resume=source)[0] == 0

    _script(env, [{"text": "answer in the fork"}])
    code, err, forked_lines = run(env, "four", fork=source)
    assert code == 0, err
    forked = session_id(forked_lines)
    assert forked != source
    assert forked_lines[-1]["text"] == "answer in the fork"
    _, history = stored(env, forked)
    assert history[::2] == ["one", "three", "four"]
    _, source_history = stored(env, source)
    assert source_history[::2] == ["one", "three"]  # the source is as it was

    tree = _tree(source)
    assert "branches (2):" in tree
    assert "1. ends at" in tree and "2. ends at" in tree and "(current)" in tree
    assert "2. two" in tree and "2. three" in tree
    assert "1-1 as in an earlier branch" in tree
    assert "children (1):" in tree and "task call task_1" in tree
    assert "forks (1):" in tree and forked in tree

    code, shown, _ = _show(source, "1")
    assert code == 0 and "> two" in shown and "> three" not in shown
    code, shown, _ = _show(source, "current")
    assert code == 0 and "> three" in shown and "> two" not in shown
    code, _, problem = _show(source, "7")
    assert code == 2 and "no branch '7'" in problem


def test_fork_of_an_unknown_session_is_a_usage_error(env: Env) -> None:
    _script(env, [{"text": "never"}])
    code, err, _ = run(env, "hi", fork="nope")
    assert code == 2 and "no session 'nope'" in err


def test_tree_of_an_unknown_session(env: Env) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert anyio.run(lambda: sessions_tree("missing", out=out, err=err)) == 2
    assert "no session 'missing'" in err.getvalue()


def test_the_cli_refuses_fork_with_resume(env: Env) -> None:
    # A process of its own: the CLI configures logging for the process it runs in.
    done = subprocess.run(
        [sys.executable, "-m", "earshot", "-p", "hi", "--fork", "a", "--resume", "b"],
        cwd=env.workspace,
        env=env.environ(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "--fork cannot be used with --resume or --continue" in done.stderr
