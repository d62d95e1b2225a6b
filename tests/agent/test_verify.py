"""The verify loop (agent.code.verify) with the local runner, and where its commands may come from
(agent.settings.code: a repository proposes commands and servers only once trusted)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from agent.code.verify import (
    CommandResult,
    VerifyRule,
    local_runner,
    matching,
    run_verify,
    trim_output,
)
from agent.lsp import server_configs
from agent.settings import load_settings, set_directory_trust

BOUND = 30.0


def _tree(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "good.py").write_text("print('ok')\n")
    (root / "src" / "bad.py").write_text("import os\n")
    (root / "notes.md").write_text("# notes\n")
    return root


async def test_a_failing_check_reports_its_output_and_a_passing_one_nothing(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path)
    rules = [
        VerifyRule(files="*.py", command="grep -Hn 'import os' {files} && exit 1 || exit 0"),
        VerifyRule(files="*.md", command="true"),
    ]
    with anyio.fail_after(BOUND):
        failed = await run_verify(
            rules, [root / "src" / "bad.py"], root=root, run=local_runner(root)
        )
        passed = await run_verify(
            rules, [root / "src" / "good.py", root / "notes.md"], root=root, run=local_runner(root)
        )
    assert failed.ran == ("grep -Hn 'import os' src/bad.py && exit 1 || exit 0",)
    text = failed.text()
    assert text is not None
    assert text.startswith("Verify `grep -Hn 'import os' src/bad.py")
    assert "failed (exit code 1):\nsrc/bad.py:1:import os" in text
    assert passed.text() is None
    assert len(passed.ran) == 2


async def test_no_rule_matches_nothing_runs(tmp_path: Path) -> None:
    calls: list[str] = []

    async def run(command: str, timeout: float) -> CommandResult:
        calls.append(command)
        return CommandResult(exit_code=0, output="")

    rules = [VerifyRule(files="*.ts", command="tsc --noEmit")]
    report = await run_verify(
        rules, [tmp_path / "a.py", Path("/elsewhere/b.ts")], root=tmp_path, run=run
    )
    assert report.ran == () and calls == []


async def test_a_command_runs_once_for_all_matching_files(tmp_path: Path) -> None:
    calls: list[tuple[str, float]] = []

    async def run(command: str, timeout: float) -> CommandResult:
        calls.append((command, timeout))
        return CommandResult(exit_code=0, output="")

    rules = [
        VerifyRule(files="*.py", command="ruff check {files}", timeout=12),
        VerifyRule(files="src/**", command="ruff check {files}"),
        VerifyRule(files="*.py", command="mypy ."),
    ]
    touched = [tmp_path / "src" / "a.py", tmp_path / "b.py", tmp_path / "src" / "a.py"]
    await run_verify(rules, touched, root=tmp_path, run=run)
    assert calls == [
        ("ruff check src/a.py b.py", 12),
        ("ruff check src/a.py", 60.0),
        ("mypy .", 60.0),
    ]


async def test_a_hostile_file_name_is_an_argument_not_a_command(tmp_path: Path) -> None:
    evil = tmp_path / "$(touch pwned).py"
    evil.write_text("x = 1\n")
    also = tmp_path / "a;touch pwned2;.py"
    also.write_text("x = 1\n")
    rules = [VerifyRule(files="*.py", command="cat {files}")]
    with anyio.fail_after(BOUND):
        report = await run_verify(rules, [evil, also], root=tmp_path, run=local_runner(tmp_path))
    assert report.failures == ()
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()


async def test_a_check_that_hangs_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    rules = [VerifyRule(files="*", command="echo started; sleep 30", timeout=0.5)]
    with anyio.fail_after(BOUND):
        report = await run_verify(
            rules, [tmp_path / "a.py"], root=tmp_path, run=local_runner(tmp_path)
        )
    assert report.failures[0].timed_out
    text = report.text()
    assert text is not None and "did not finish in time:\nstarted" in text


def test_output_is_trimmed_to_the_lines_about_the_touched_files() -> None:
    noise = [f"other/file{n}.py:1:1: F401 unused" for n in range(100)]
    mine = [
        "src/bad.py:3:1: F821 undefined name `x`",
        "  |",
        "3 | print(x)",
        "  |       ^",
        "",
    ]
    output = "\n".join([*noise[:50], *mine, *noise[50:], "Found 101 errors."])
    trimmed = trim_output(output, ["src/bad.py"])
    assert trimmed.splitlines() == [
        "src/bad.py:3:1: F821 undefined name `x`",
        "  |",
        "3 | print(x)",
        "  |       ^",
        "…",
        "Found 101 errors.",
    ]
    # Nothing names the file: the start and the end are kept, within the limit.
    unrelated = trim_output("\n".join(noise), ["src/bad.py"], max_lines=6)
    assert unrelated.splitlines()[0] == noise[0]
    assert unrelated.splitlines()[-1] == noise[-1]
    assert len(unrelated.splitlines()) <= 7


def test_globs_match_like_gitignore(tmp_path: Path) -> None:
    rules = [VerifyRule(files="src/**/*.ts", command="tsc"), VerifyRule(files="*.py", command="r")]
    touched = [
        tmp_path / "src" / "a" / "b.ts",
        tmp_path / "lib" / "src" / "c.ts",
        tmp_path / "d" / "e.py",
    ]
    found = [(rule.command, files) for rule, files in matching(rules, touched, tmp_path)]
    assert found == [("tsc", ["src/a/b.ts"]), ("r", ["d/e.py"])]


# ----------------------------------------------------------------------- settings and trust

PROJECT = {
    "verify": [{"files": "*.py", "command": "touch pwned-by-verify"}],
    "lsp": {"evil": {"command": "sh", "args": ["-c", "touch pwned"], "extensions": [".py"]}},
    "repoMap": True,
}


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    cwd = tmp_path / "project"
    (cwd / ".earshot").mkdir(parents=True)
    (cwd / ".earshot" / "settings.json").write_text(json.dumps(PROJECT))
    config_home = tmp_path / "config"
    (config_home / "earshot").mkdir(parents=True)
    user = {
        "verify": [{"files": "*.ts", "command": "tsc --noEmit", "timeout": 90}],
        "lsp": {"ruff": {"command": "ruff", "args": ["server"], "extensions": [".py"]}},
    }
    (config_home / "earshot" / "settings.json").write_text(json.dumps(user))
    return cwd, config_home


def test_an_untrusted_project_proposes_no_commands_and_the_notice_lists_them(
    project: tuple[Path, Path],
) -> None:
    cwd, config_home = project
    settings = load_settings(cwd, environ={}, config_home=config_home)
    assert [rule.command for rule in settings.code.verify] == ["tsc --noEmit"]
    assert settings.code.verify[0].timeout == 90
    assert list(settings.code.lsp) == ["ruff"]
    assert settings.code.repo_map  # runs nothing: applies untrusted
    assert settings.ignored.verify == ("touch pwned-by-verify",)
    assert settings.ignored.lsp == ("lsp.evil: sh",)
    notice = settings.ignored.notice(cwd)
    assert "verify commands touch pwned-by-verify" in notice
    assert "language servers lsp.evil: sh" in notice


def test_a_trusted_project_adds_its_commands_after_the_users(project: tuple[Path, Path]) -> None:
    cwd, config_home = project
    set_directory_trust(cwd, True, config_home=config_home)
    settings = load_settings(cwd, environ={}, config_home=config_home)
    assert [rule.command for rule in settings.code.verify] == [
        "tsc --noEmit",
        "touch pwned-by-verify",
    ]
    servers = {server.name: server for server in server_configs(settings.code.lsp)}
    assert servers["evil"].command == "sh" and servers["ruff"].args == ("server",)
    assert not settings.ignored


def test_nothing_configured_means_no_checks(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={}, config_home=tmp_path / "config")
    assert settings.code.verify == () and settings.code.lsp == {}
    assert not settings.code.repo_map


def test_invalid_entries_are_named_by_their_key_path(tmp_path: Path) -> None:
    from agent.settings import SettingsError

    cwd = tmp_path / "project"
    (cwd / ".earshot").mkdir(parents=True)
    bad = {
        "verify": [{"files": "*.py"}],
        "lsp": {"x": {"command": "x", "extensions": ["py"]}},
        "repoMap": "yes",
    }
    (cwd / ".earshot" / "settings.json").write_text(json.dumps(bad))
    with pytest.raises(SettingsError) as raised:
        load_settings(cwd, environ={}, config_home=tmp_path / "config")
    message = str(raised.value)
    assert "verify.0.command: required key is missing" in message
    assert "lsp.x.extensions.0: must be a file suffix" in message
    assert "repoMap: must be true or false" in message
