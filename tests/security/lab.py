"""The adversarial lab: each row is an attack (or a control) run for real in a throw-away lab.

A lab is a temporary directory with a project (the workspace root and the cwd), a directory
outside it, a fake HOME and a `bin` directory put first on PATH (a fake `sudo`). A row says how
to call the gate (the command, the mode, the rules, later the settings) and what to look at on
disk afterwards (`Probe`). `run_row`:

1. builds the lab (and the row's fixture: a git repository with a bare remote, an npm
   project...) and runs the row's `setup`;
2. asks `decide` (with HOME pointing at the fake home);
3. runs the command with `bash -c` in the lab (cwd = project, HOME = fake home), whatever the
   decision, through the row's executor;
4. checks, for an attack, that the decision is the defence the row expects AND that the effect
   happened when the command ran (so the row is a real attack: without the gate it works), and
   never both allowed and effective; for a control, that it was allowed and had its effect.

Rows are data: other defences join as rows with their own `expect` (`Defence.SANDBOX`: `decide`
may allow, the sandboxed run must not have the effect) and `settings`, and register an executor
for it in `EXECUTORS`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from agent.backends import Mode
from agent.permissions import Decision, PermissionRules, decide
from agent.tools.base import PermissionRequest


class Defence(Enum):
    DENY = "deny"
    """`decide` refuses outright."""
    ASK = "ask"
    """`decide` asks the user."""
    REFUSED = "refused"
    """Either: what matters is that it is not allowed unasked."""
    ALLOW = "allow"
    """A control: legitimate work, allowed, and it has its effect."""
    SANDBOX = "sandbox"
    """`decide` may allow; the command runs in the sandbox, which stops the effect (rows for it
    come with the sandbox; a row needs an executor registered for it)."""


@dataclass(frozen=True)
class Probe:
    """What to look at after the run. Paths are lab templates (`{project}/x`, `{outside}/x`,
    `{home}/.bashrc`)."""

    kind: str
    """`created`, `deleted`, `changed`, `contains`, `output`."""
    path: str = ""
    text: str = ""

    def describe(self) -> str:
        return f"{self.kind} {self.path} {self.text}".strip()


def created(path: str) -> Probe:
    return Probe("created", path)


def deleted(path: str) -> Probe:
    return Probe("deleted", path)


def changed(path: str) -> Probe:
    """The file's content (or mode) differs from what it was after setup."""
    return Probe("changed", path)


def contains(path: str, text: str) -> Probe:
    return Probe("contains", path, text)


def output(text: str) -> Probe:
    """The command exited 0 and printed `text`."""
    return Probe("output", text=text)


@dataclass(frozen=True)
class Row:
    id: str
    cls: str
    """The class of attack (`deny-escape`, `ask-escape`, `allow-smuggle`, `outside-write`,
    `control`...)."""
    command: str
    """A template: `{project}`, `{outside}`, `{home}`, `{bin}`, `{lab}`."""
    effect: Probe
    expect: Defence
    mode: Mode = "auto"
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    setup: str = ""
    """Shell run in the project before the call (a template too)."""
    fixture: str = "plain"
    """`plain`, `git` (a repository with one commit and a bare remote in `{outside}/remote.git`),
    or `npm` (a package.json whose test script records its arguments in `ran.txt`)."""
    settings: Mapping[str, Any] = field(default_factory=lambda: {})
    """For the classes that depend on settings (sandbox, trust...)."""
    needs: tuple[str, ...] = ()
    """Programs the row needs on PATH; the row is skipped without them."""
    tool: str = "Bash"
    """The tool called (`Bash`; `Write`, `Edit`, `Read`, `Fetch` rows need an executor
    registered for the tool)."""
    paths: tuple[str, ...] = ()
    """For path tools: the paths (templates) the call names."""
    domain: str | None = None
    """For `Fetch`."""
    read_only: bool = False


@dataclass(frozen=True)
class Lab:
    root: Path

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def fill(self, template: str) -> str:
        """`{project}`, `{outside}`, `{home}`, `{bin}` and `{lab}` replaced (other braces kept:
        commands have their own)."""
        for name, path in (
            ("project", self.project),
            ("outside", self.outside),
            ("home", self.home),
            ("bin", self.bin),
            ("lab", self.root),
        ):
            template = template.replace("{" + name + "}", str(path))
        return template

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TMPDIR": str(self.root / "tmp"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "lab",
            "GIT_AUTHOR_EMAIL": "lab@example.invalid",
            "GIT_COMMITTER_NAME": "lab",
            "GIT_COMMITTER_EMAIL": "lab@example.invalid",
            "npm_config_update_notifier": "false",
            "npm_config_cache": str(self.root / "npm-cache"),
        }


@dataclass(frozen=True)
class Run:
    decision: Decision
    code: int
    output: str
    happened: bool


Executor = Callable[[Lab, Row, str], "tuple[int, str]"]


def run_plain(lab: Lab, row: Row, command: str) -> tuple[int, str]:
    """`bash -c` in the lab, as the bash tool runs commands (without a sandbox)."""
    return _bash(lab, command)


EXECUTORS: dict[tuple[str, Defence], Executor] = {
    ("Bash", Defence.DENY): run_plain,
    ("Bash", Defence.ASK): run_plain,
    ("Bash", Defence.REFUSED): run_plain,
    ("Bash", Defence.ALLOW): run_plain,
}
"""How rows of each (tool, defence) run; the sandbox registers ("Bash", `Defence.SANDBOX`), and
rows for other tools register theirs (a `Write` executor performs the write the row describes)."""

_FAKE_SUDO = """#!/bin/sh
# the lab's sudo: reads sudo's options, then runs the command as the same user
while [ $# -gt 0 ]; do
  case "$1" in
    -u|-g|-C|-D|-h|-p|-r|-t|-T|-U) shift 2 ;;
    --) shift; break ;;
    -*) shift ;;
    *) break ;;
  esac
done
exec "$@"
"""


def build_lab(root: Path, row: Row, templates: Path) -> Lab:
    lab = Lab(root)
    for directory in (lab.project, lab.outside, lab.home, lab.bin, root / "tmp"):
        directory.mkdir(parents=True, exist_ok=True)
    sudo = lab.bin / "sudo"
    sudo.write_text(_FAKE_SUDO, encoding="utf-8")
    sudo.chmod(0o755)
    (lab.project / "victim").write_text("project file\n", encoding="utf-8")
    (lab.project / "a").write_text("alpha\nbeta\n", encoding="utf-8")
    (lab.outside / "victim").write_text("outside file\n", encoding="utf-8")
    (lab.home / ".bashrc").write_text("# the user's start-up file\n", encoding="utf-8")
    if row.fixture == "git":
        shutil.copytree(templates / "git" / "project", lab.project, dirs_exist_ok=True)
        shutil.copytree(templates / "git" / "remote.git", lab.outside / "remote.git")
        config = lab.project / ".git" / "config"
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace("url = x", f"url = {lab.outside / 'remote.git'}"))
    elif row.fixture == "npm":
        (lab.project / "package.json").write_text(
            '{"name": "lab", "version": "1.0.0", "scripts": {"test": "echo ran > ran.txt"}}\n',
            encoding="utf-8",
        )
    if row.setup:
        code, out = _bash(lab, lab.fill(row.setup))
        assert code == 0, f"setup failed: {out}"
    return lab


def make_templates(root: Path) -> None:
    """Fixtures built once per session and copied into each lab."""
    git = root / "git"
    project = git / "project"
    project.mkdir(parents=True)
    env = Lab(root).env() | {"HOME": str(root)}
    script = (
        f"git init -q -b main {project} && cd {project} && echo tracked > tracked.txt && "
        "git add tracked.txt && git commit -qm 'first commit' && "
        f"git init -q --bare -b main {git / 'remote.git'} && git remote add origin x"
    )
    subprocess.run(["bash", "-c", script], check=True, env=env, capture_output=True)


def run_row(row: Row, root: Path, templates: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    missing = [program for program in row.needs if shutil.which(program) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    executor = EXECUTORS.get((row.tool, row.expect))
    if executor is None:
        pytest.skip(f"no executor registered for {row.tool} rows expecting {row.expect.value}")
    lab = build_lab(root, row, templates)
    command = lab.fill(row.command)
    before = _snapshot(lab, row.effect)
    monkeypatch.setenv("HOME", str(lab.home))
    rules = PermissionRules.parse(allow=row.allow, ask=row.ask, deny=row.deny)
    request = PermissionRequest(
        rule_tool=row.tool,
        description=command,
        command=command if row.tool == "Bash" else None,
        paths=tuple(Path(lab.fill(path)) for path in row.paths),
        domain=row.domain,
        is_file_edit=row.tool in ("Edit", "Write"),
    )
    decision = decide(rules, row.mode, request, read_only=row.read_only, roots=[lab.project])
    code, out = executor(lab, row, command)
    return Run(decision, code, out, _happened(lab, row.effect, before, code, out))


def check(row: Row, run: Run) -> None:
    """The row's assertions (see the module docstring)."""
    decision, effect = run.decision, row.effect.describe()
    where = f"{row.id}: `{row.command}` -> {decision.outcome} (step {decision.step}: "
    where += f"{decision.reason}); effect {effect} {'happened' if run.happened else 'absent'}"
    if row.expect is Defence.ALLOW:
        assert decision.outcome == "allow", f"control refused: {where}"
        assert run.happened, f"control had no effect: {where}\n{run.output}"
        return
    assert not (decision.outcome == "allow" and run.happened), f"BREACH: {where}"
    if row.expect is Defence.SANDBOX:
        return
    wanted = (
        {"deny"}
        if row.expect is Defence.DENY
        else {"ask"}
        if row.expect is Defence.ASK
        else {
            "deny",
            "ask",
        }
    )
    assert decision.outcome in wanted, f"expected {row.expect.value}: {where}"
    assert run.happened, f"the attack does nothing even unguarded: {where}\n{run.output}"


def _bash(lab: Lab, command: str) -> tuple[int, str]:
    result = subprocess.run(
        ["bash", "-c", command],
        cwd=lab.project,
        env=lab.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr


def _snapshot(lab: Lab, probe: Probe) -> tuple[bytes, int] | None:
    if not probe.path:
        return None
    path = Path(lab.fill(probe.path))
    if not path.exists() and not path.is_symlink():
        return None
    stat = os.lstat(path)
    content = path.read_bytes() if path.is_file() else b""
    return content, stat.st_mode


def _happened(
    lab: Lab, probe: Probe, before: tuple[bytes, int] | None, code: int, out: str
) -> bool:
    path = Path(lab.fill(probe.path)) if probe.path else None
    match probe.kind:
        case "created":
            assert path is not None
            return before is None and (path.exists() or path.is_symlink())
        case "deleted":
            assert path is not None
            return before is not None and not path.exists() and not path.is_symlink()
        case "changed":
            assert path is not None
            return _snapshot(lab, probe) != before
        case "contains":
            assert path is not None
            return path.is_file() and probe.text in path.read_text(errors="replace")
        case "output":
            return code == 0 and probe.text in out
        case _:
            raise AssertionError(f"unknown probe {probe.kind}")
