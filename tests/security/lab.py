"""The adversarial lab: each row is an attack (or a control) run for real in a throw-away lab.

A lab is a temporary directory with a project (the workspace root and the cwd), a directory
outside it, a fake HOME and a `bin` directory put first on PATH (a fake `sudo`). Labs live under
/var/tmp, outside the temp dir the command sandbox lets commands write, so that "outside" means
what it says. A row says how to call the gate (the command, the mode, the rules, the settings)
and what to look at on disk afterwards (`Probe`). `run_row`:

1. builds the lab (and the row's fixture: a git repository with a bare remote, an npm
   project...), runs the row's `setup`, and points HOME (and the lab's PATH, git identity...)
   at it;
2. asks `decide` for the rows whose runner is a command (`Bash`, `Terminal`);
3. runs the attack through the executor registered for the row's (`tool`, `expect`), once
   per arm in a fresh lab: the UNGUARDED arm shows the attack works without the defence (so the
   row can fail), the GUARDED arm runs it with the defence in place (the command sandbox, an
   untrusted workspace, a real session and its gate). Gate rows (`DENY`, `ASK`, `REFUSED`,
   `ALLOW`) have only the unguarded arm: `decide` is their defence; controls that run with their
   defences in place (`CONFINED`, and a session's `ALLOW`) only the guarded one;
4. runs the row's `then` (what the user does next: `git status`), and probes the effect;
5. checks (`check`): a gate row gets the decision it expects and its effect happened unguarded,
   and is never both allowed and effective; a two-armed row (`SANDBOX`, `TRUST`, `SESSION`) has
   its effect unguarded and not guarded (and a `SANDBOX` row is reported as stopped by the
   sandbox unless the row says the failure carries no such sign); a control (`ALLOW`,
   `CONFINED`) is allowed and has its effect.

Executors live beside the rows that need them (`lab_sandbox`: the bash tool in the real
sandbox, and an editor terminal's command line; `lab_session`: a whole session through the
composition root) and register in `EXECUTORS`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from agent.backends import Mode
from agent.permissions import Decision, PermissionRules, decide
from agent.tools import PermissionRequest


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
    """`decide` may allow (or the user may say yes); the command runs in the real sandbox, which
    stops the effect and says so. Unguarded: the same command unconfined has it."""
    CONFINED = "confined"
    """A control in the sandbox: allowed, and run confined it still has its effect."""
    TRUST = "trust"
    """A real session in a workspace the user has not trusted: no effect. Unguarded: the same
    session once the user trusts the directory has it."""
    SESSION = "session"
    """A real session (composition root, gate, sandbox, tools): no effect. Unguarded: the same
    session with the row's `unguarded` overrides (the user says yes, a rule lifted) has it."""


GATE_DEFENCES = frozenset({Defence.DENY, Defence.ASK, Defence.REFUSED, Defence.ALLOW})
"""Decided by `decide`, shown real by one unguarded run."""
TWO_ARMED = frozenset({Defence.SANDBOX, Defence.TRUST, Defence.SESSION})
DECIDED_TOOLS = frozenset({"Bash", "Terminal"})
"""Runners whose command the lab asks `decide` about (a session asks its own gate)."""


@dataclass(frozen=True)
class Probe:
    """What to look at after the run. Paths are lab templates (`{project}/x`, `{outside}/x`,
    `{home}/.bashrc`)."""

    kind: str
    """`created`, `deleted`, `changed`, `contains`, `output`, `mentions`."""
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


def mentions(text: str) -> Probe:
    """`text` (a secret, a marker) is in what the run returned, whatever its exit code: the
    command's output, or everything a session sent the model."""
    return Probe("mentions", text=text)


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
    """Programs the row needs on PATH (or `ipv6`); the row is skipped without them."""
    tool: str = "Bash"
    """The tool called (`Bash`; `Write`, `Edit`, `Read`, `Fetch` rows need an executor
    registered for the tool)."""
    paths: tuple[str, ...] = ()
    """For path tools: the paths (templates) the call names."""
    domain: str | None = None
    """For `Fetch`."""
    read_only: bool = False
    then: str = ""
    """Run (unconfined, as the user) after the attack and before the probe: the user's next
    `git status`, which runs what the attack planted."""
    unguarded: Mapping[str, Any] = field(default_factory=lambda: {})
    """For `SESSION` rows: what differs in the unguarded arm (`lab_session`)."""
    calls: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    """For `Session` rows: the model's tool calls (name, arguments: templates), one per turn."""
    answers: tuple[str, ...] = ()
    """For `Session` rows: the user's answers to the guarded arm's prompts, in order (option
    kinds such as `allow_always`); every other prompt is rejected."""
    stopped: bool = True
    """For `SANDBOX` rows: the sandbox says it stopped the command (a read-only file system...).
    False where the failure carries no sign of the sandbox (a cross-device hard link), or where
    nothing fails (the command reads its parent's environment and finds nothing)."""


@dataclass(frozen=True)
class Lab:
    root: Path
    values: dict[str, str] = field(default_factory=lambda: {})
    """More template names, set by executors (`{server}`: a loopback server's host:port)."""

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
        """`{project}`, `{outside}`, `{home}`, `{bin}`, `{lab}` and the `values` replaced (other
        braces kept: commands have their own)."""
        names = {
            "project": str(self.project),
            "outside": str(self.outside),
            "home": str(self.home),
            "bin": str(self.bin),
            "lab": str(self.root),
            **self.values,
        }
        for name, value in names.items():
            template = template.replace("{" + name + "}", value)
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

    def process_env(self) -> dict[str, str]:
        """What this process's environment gets while a row runs in-process (the bash tool and
        sessions pass their own environment on): the lab's, with the real temp dir, which the
        sandbox lets commands write, and npm's cache in the project."""
        return self.env() | {
            "TMPDIR": tempfile.gettempdir(),
            "npm_config_cache": str(self.project / ".npm-cache"),
        }


@dataclass(frozen=True)
class Arm:
    """One run of the attack."""

    code: int
    output: str
    happened: bool


@dataclass(frozen=True)
class Run:
    decision: Decision | None
    """`decide`'s answer for command runners (None for sessions, which ask their own gate)."""
    unguarded: Arm | None
    guarded: Arm | None


Executor = Callable[[Lab, Row, str, bool], "tuple[int, str]"]
"""`(lab, row, command, guarded) -> (exit code, output)`."""


def run_plain(lab: Lab, row: Row, command: str, guarded: bool) -> tuple[int, str]:
    """`bash -c` in the lab, as the bash tool runs commands without a sandbox."""
    return _bash(lab, command)


EXECUTORS: dict[tuple[str, Defence], Executor] = {
    ("Bash", Defence.DENY): run_plain,
    ("Bash", Defence.ASK): run_plain,
    ("Bash", Defence.REFUSED): run_plain,
    ("Bash", Defence.ALLOW): run_plain,
}
"""How rows of each (tool, defence) run; `lab_sandbox` and `lab_session` register theirs."""

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
    missing = [need for need in row.needs if not _available(need)]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    executor = EXECUTORS.get((row.tool, row.expect))
    if executor is None:
        pytest.skip(f"no executor registered for {row.tool} rows expecting {row.expect.value}")
    decision: Decision | None = None
    results: dict[str, Arm] = {}
    for arm in _arms(row):
        lab = build_lab(root / arm, row, templates)
        for name, value in lab.process_env().items():
            monkeypatch.setenv(name, value)
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
            monkeypatch.delenv(name, raising=False)
        command = lab.fill(row.command)
        if decision is None and row.tool in DECIDED_TOOLS:
            decision = _decide(lab, row, command)
        before = _snapshot(lab, row.effect)
        code, out = executor(lab, row, command, arm == "guarded")
        if row.then:
            _bash(lab, lab.fill(row.then))
        results[arm] = Arm(code, out, _happened(lab, row.effect, before, code, out))
    return Run(decision, results.get("unguarded"), results.get("guarded"))


def _available(need: str) -> bool:
    """A program on PATH, or `ipv6`: this machine can open an IPv6 socket."""
    if need != "ipv6":
        return shutil.which(need) is not None
    try:
        socket.socket(socket.AF_INET6, socket.SOCK_STREAM).close()
    except OSError:
        return False
    return True


def _arms(row: Row) -> tuple[str, ...]:
    if row.expect in TWO_ARMED:
        return ("unguarded", "guarded")
    if row.expect is Defence.CONFINED or row.tool not in DECIDED_TOOLS:
        return ("guarded",)  # a control that runs with every defence in place
    return ("unguarded",)


def _decide(lab: Lab, row: Row, command: str) -> Decision:
    rules = PermissionRules.parse(allow=row.allow, ask=row.ask, deny=row.deny)
    tool = "Bash" if row.tool == "Terminal" else row.tool
    request = PermissionRequest(
        rule_tool=tool,
        description=command,
        command=command if tool == "Bash" else None,
        paths=tuple(Path(lab.fill(path)) for path in row.paths),
        domain=row.domain,
        is_file_edit=tool in ("Edit", "Write"),
    )
    return decide(rules, row.mode, request, read_only=row.read_only, roots=[lab.project])


STOPPED = "The sandbox stopped this command"
"""What the bash tool tells the model when the sandbox stopped a command (`agent.tools.bash`);
the terminal runner says the same when `Sandbox.stopped` recognises the output."""


def check(row: Row, run: Run) -> None:
    """The row's assertions (see the module docstring)."""
    decision, effect = run.decision, row.effect.describe()
    decided = "" if decision is None else f" -> {decision.outcome} (step {decision.step}: "
    decided += "" if decision is None else f"{decision.reason})"
    where = f"{row.id}: `{row.command}`{decided}; effect {effect}"
    unguarded, guarded = run.unguarded, run.guarded
    if row.expect in (Defence.CONFINED, Defence.ALLOW) and guarded is not None:
        assert decision is None or decision.outcome == "allow", f"control refused: {where}"
        assert guarded.happened, f"control had no effect when guarded: {where}\n{guarded.output}"
        assert STOPPED not in guarded.output, f"control stopped: {where}\n{guarded.output}"
        return
    assert unguarded is not None
    where += f" {'happened' if unguarded.happened else 'absent'} unguarded"
    if row.expect is Defence.ALLOW:
        assert decision is not None and decision.outcome == "allow", f"control refused: {where}"
        assert unguarded.happened, f"control had no effect: {where}\n{unguarded.output}"
        return
    assert unguarded.happened, (
        f"the attack does nothing even unguarded: {where}\n{unguarded.output}"
    )
    if row.expect in TWO_ARMED:
        assert guarded is not None
        assert not guarded.happened, f"BREACH (guarded): {where}\n{guarded.output}"
        if row.expect is Defence.SANDBOX and row.stopped:
            assert STOPPED in guarded.output, f"not reported as stopped: {where}\n{guarded.output}"
        return
    assert decision is not None
    assert decision.outcome != "allow", f"BREACH: {where}"
    wanted = (
        {"deny"}
        if row.expect is Defence.DENY
        else {"ask"}
        if row.expect is Defence.ASK
        else {"deny", "ask"}
    )
    assert decision.outcome in wanted, f"expected {row.expect.value}: {where}"


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
    text = lab.fill(probe.text)
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
            return path.is_file() and text in path.read_text(errors="replace")
        case "output":
            return code == 0 and text in out
        case "mentions":
            return text in out
        case _:
            raise AssertionError(f"unknown probe {probe.kind}")
