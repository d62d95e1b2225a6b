"""A lab for the real command sandbox (bubblewrap, no mocks): a project with a real git
repository, a directory outside it, and a fake home, all OUTSIDE the temp dir (which the sandbox
lets commands write), so that "outside" means what it says."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from agent.backends import ProcessResult
from agent.local import LocalProcesses
from agent.sandbox import Sandbox, open_sandbox
from agent.settings import SandboxConfig

LINUX = sys.platform.startswith("linux")
needs_linux = pytest.mark.skipif(not LINUX, reason="the real sandbox tests run on Linux")
LAB_PARENT = Path("/var/tmp")
"""Not a temp dir the sandbox makes writable (`/tmp`, `$TMPDIR`)."""


def require_bubblewrap() -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed; scripts/test installs it")


@dataclass
class Lab:
    base: Path
    project: Path
    outside: Path
    home: Path
    sandboxes: list[Sandbox] = field(default_factory=lambda: [])
    """Opened by `sandbox`, closed with the lab (their private temp dirs removed)."""

    async def sandbox(self, config: SandboxConfig | None = None, *roots: Path) -> Sandbox:
        sandbox = await open_sandbox(config or SandboxConfig(), (self.project, *roots))
        assert sandbox.status == "active", sandbox.reason
        self.sandboxes.append(sandbox)
        return sandbox

    async def run(
        self,
        command: str,
        sandbox: Sandbox | None,
        *,
        cwd: Path | None = None,
        timeout: float = 20.0,
    ) -> ProcessResult:
        return await LocalProcesses().run(
            command,
            cwd=cwd or self.project,
            timeout=timeout,
            output_limit=100_000,
            confine=sandbox,
        )


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@cache
def _repository_template() -> Path:
    """A small committed repository, made once per process and copied into each lab."""
    holder = Path(tempfile.mkdtemp(prefix="earshot-lab-template-"))
    atexit.register(shutil.rmtree, holder, True)
    template = holder / "project"
    template.mkdir()
    git(template, "init", "-q")
    (template / "README.md").write_text("hello\n", encoding="utf-8")
    git(template, "add", "README.md")
    git(template, "commit", "-q", "-m", "init")
    return template


def make_lab(monkeypatch: pytest.MonkeyPatch, parent: Path = LAB_PARENT) -> Iterator[Lab]:
    """The lab under `parent`, with $HOME pointing at its fake home (and the XDG dirs unset, so
    earshot's config and data dirs are in that home)."""
    require_bubblewrap()
    base = Path(tempfile.mkdtemp(prefix="earshot-lab-", dir=parent)).resolve()
    project = base / "project"
    shutil.copytree(_repository_template(), project, symlinks=True)
    outside = base / "outside"
    outside.mkdir()
    (outside / "notes").write_text("outside\n", encoding="utf-8")
    home = base / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# the user's\n", encoding="utf-8")
    # earshot has run before: its data dir exists (the sandbox keeps its lock there).
    (home / ".local" / "share" / "earshot").mkdir(parents=True)
    (home / ".local" / "share" / "earshot" / "sandbox.lock").write_bytes(b"")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    try:
        lab = Lab(base=base, project=project, outside=outside, home=home)
        yield lab
        for sandbox in lab.sandboxes:
            sandbox.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def write_npm_test_script(project: Path) -> None:
    """A `package.json` whose `test` script writes its arguments to `out.txt`."""
    script = "node -e \"require('fs').writeFileSync('out.txt', process.argv.slice(1).join(' '))\""
    package = {"name": "lab", "version": "1.0.0", "scripts": {"test": f"{script} --"}}
    (project / "package.json").write_text(json.dumps(package), encoding="utf-8")


def tree(path: Path) -> dict[str, str]:
    """Every file under `path` with its content (symlinks as `-> target`): what must not change."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in [*filenames, *dirnames]:
            full = Path(dirpath) / name
            relative = str(full.relative_to(path))
            if full.is_symlink():
                found[relative] = f"-> {os.readlink(full)}"
            elif full.is_file():
                found[relative] = full.read_bytes().decode("utf-8", errors="replace")
            else:
                found[relative + "/"] = ""
    return found
