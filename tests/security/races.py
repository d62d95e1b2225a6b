"""Racing the file tools: a lab with a project, a fake home full of secrets, and background
processes that swap what a path inside the project leads to while the tools run.

A `Flipper` is a real process (two cores: it truly runs beside the test) that points a symbolic
link in the project at one target, then another, as fast as it can: `ln -sfn "$HOME" flip;
ln -sfn real flip` in a loop, done with `symlink` + `rename` so the link is never missing. A
`Swapper` does the same to a REAL directory (renamed away, a symbolic link put in its place, and
back), which is what a tool that walks a tree meets. `ToolRunner` calls the tool layer in
process exactly as a turn does: `validate_call`, then the `ToolExecutor` with the session's
permission gate (so the decision and the use are the real ones), in `auto` mode, with every
prompt refused (print mode's answer).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agent.backends import DenyingInteraction, Interaction, Mode
from agent.local import LocalFiles, LocalProcesses
from agent.permissions import PermissionGate, PermissionRules
from agent.protected_paths import protected_paths
from agent.tools import (
    AnyTool,
    ReadTracker,
    ScopeContract,
    ToolServices,
    builtin_tools,
)
from agent.turn import Tooling
from agent.turn.execution import BatchState, ToolExecutor
from agent.turn.tool_calls import SchemaValidators, validate_call
from providers.types import TextPart, ToolCallPart, ToolResultPart

SECRET_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- SECRET-KEY-MATERIAL-7f3a"
API_KEY = "sk-SECRET-API-KEY-55d1"
HOME_ONLY = "HOME_ONLY_NAME_c41e"
"""A file name only the fake home has: a listing that shows it looked outside."""
SECRETS = (SECRET_KEY, API_KEY, HOME_ONLY, "SECRET-KEY-MATERIAL", "SECRET-API-KEY")
OUTSIDE = "outside notes"
"""Text only files outside the project hold: a read outside shows it."""

_FLIP = r"""
import os, sys, time
link, first, second = sys.argv[1:4]
spare = link + ".next"
ready = False
while True:
    for target in (first, second):
        try:
            os.unlink(spare)
        except FileNotFoundError:
            pass
        os.symlink(target, spare)
        os.replace(spare, link)
        time.sleep(0.00005)  # thousands of flips a second, without taking a whole core
        if not ready:
            ready = True
            print("ready", flush=True)
"""

_SWAP = r"""
import os, sys
directory, outside = sys.argv[1:3]
parked = directory + ".parked"
ready = False
while True:
    os.rename(directory, parked)
    os.symlink(outside, directory)
    for _ in range(20):  # the link stays longer than the directory: a walker meets both
        os.stat(directory)
    os.unlink(directory)
    os.rename(parked, directory)
    if not ready:
        ready = True
        print("ready", flush=True)
"""


@dataclass
class Lab:
    root: Path
    project: Path
    home: Path

    @property
    def real(self) -> Path:
        return self.project / "real"

    @property
    def ssh(self) -> Path:
        return self.home / ".ssh"

    @property
    def earshot_config(self) -> Path:
        return self.home / ".config" / "earshot"


def make_lab(root: Path) -> Lab:
    """A project with harmless files in `real/`, and a home whose files are secret or
    protected (`~/.ssh`, earshot's settings with an `apiKey`, `~/.bashrc`)."""
    lab = Lab(root=root, project=root / "project", home=root / "home")
    lab.real.mkdir(parents=True)
    (lab.real / "id_ed25519").write_text("a harmless file named like a key\n", encoding="utf-8")
    (lab.real / "settings.json").write_text('{"harmless": true}\n', encoding="utf-8")
    (lab.real / "notes.txt").write_text("project notes A\n", encoding="utf-8")
    (lab.real / ".bashrc").write_text("# the project's own\n", encoding="utf-8")
    lab.ssh.mkdir(parents=True)
    (lab.ssh / "id_ed25519").write_text(SECRET_KEY + "\n", encoding="utf-8")
    (lab.ssh / HOME_ONLY).write_text(SECRET_KEY + "\n", encoding="utf-8")
    lab.earshot_config.mkdir(parents=True)
    (lab.earshot_config / "settings.json").write_text(
        json.dumps({"providers": {"x": {"apiKey": API_KEY}}}), encoding="utf-8"
    )
    (lab.home / ".bashrc").write_text("# the user's own bashrc\n", encoding="utf-8")
    (lab.home / "notes.txt").write_text("outside notes A\n", encoding="utf-8")
    (lab.home / HOME_ONLY).write_text("outside notes\n", encoding="utf-8")
    return lab


def home_state(lab: Lab) -> dict[str, bytes]:
    """Every file under the fake home, by relative path (to compare before and after)."""
    state: dict[str, bytes] = {}
    for directory, _, names in os.walk(lab.home):
        for name in names:
            path = Path(directory) / name
            state[str(path.relative_to(lab.home))] = path.read_bytes()
    return state


class _Racer:
    def __init__(self, script: str, *args: str) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", script, *args],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert self._process.stdout is not None
        # Blocks until the racer has made its first swap: no sleep, no polling.
        assert self._process.stdout.readline() == "ready\n"

    def stop(self) -> None:
        self._process.kill()
        self._process.wait()
        assert self._process.stdout is not None
        self._process.stdout.close()


@contextmanager
def flipping(link: Path, first: Path, second: Path) -> Generator[None]:
    """`link` points at `first`, then `second`, then `first`... until the block ends (then it is
    left pointing at `first`)."""
    racer = _Racer(_FLIP, str(link), str(first), str(second))
    try:
        yield
    finally:
        racer.stop()
        spare = Path(str(link) + ".next")
        spare.unlink(missing_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(first)


@contextmanager
def swapping(directory: Path, outside: Path) -> Generator[None]:
    """The real `directory` is renamed away and a link to `outside` put in its place, and back,
    until the block ends (then the real directory is back)."""
    racer = _Racer(_SWAP, str(directory), str(outside))
    try:
        yield
    finally:
        racer.stop()
        parked = Path(str(directory) + ".parked")
        if parked.exists():
            if directory.is_symlink():
                directory.unlink()
            parked.rename(directory)


@dataclass
class ToolRunner:
    """The tool layer of a session in `project`, as a turn drives it."""

    lab: Lab
    mode: Mode = "auto"
    rules: PermissionRules = field(default_factory=PermissionRules)
    reads: ReadTracker = field(default_factory=ReadTracker)
    interaction: Interaction = field(default_factory=DenyingInteraction)
    """The user: by default nobody can be asked (every prompt refused, as in print mode)."""
    _count: int = 0

    def __post_init__(self) -> None:
        project = self.lab.project
        environ = {"HOME": str(self.lab.home)}
        self.gate = PermissionGate(
            self.rules,
            cwd=project,
            roots=[project],
            protected=protected_paths([project], environ=environ),
        )
        self.tools: dict[str, AnyTool] = {tool.name: tool for tool in builtin_tools()}
        self._validators = SchemaValidators()

    def _tooling(self, turn: anyio.CancelScope) -> Tooling:
        project = self.lab.project
        mode: Mode = self.mode
        return Tooling(
            session_id="race",
            cwd=project,
            roots=(project,),
            files=LocalFiles(),
            processes=LocalProcesses(),
            interaction=self.interaction,
            gate=self.gate,
            mode=lambda: mode,
            scope=ScopeContract(),
            reads=self.reads,
            turn=turn,
            services=ToolServices(
                read_denied=self.gate.read_denied, read_deny_globs=self.gate.read_deny_globs
            ),
        )

    async def call(self, name: str, **arguments: Any) -> ToolResultPart:
        """Run one call of tool `name` through validation, the gate and the tool; its result."""
        self._count += 1
        call = ToolCallPart(id=f"call-{self._count}", name=name, arguments=arguments)
        results: list[ToolResultPart] = []
        with anyio.CancelScope() as turn:
            tooling = self._tooling(turn)
            checked = validate_call(
                call, self.tools, self._validators, tooling.context, lambda event: None
            )

            async def record(result: ToolResultPart) -> bool:
                return True

            results = await ToolExecutor(tooling, emit=lambda event: None).run_batch(
                [checked], BatchState(), record
            )
        [result] = results
        return result


def result_text(result: ToolResultPart) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, TextPart))


def leaked(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]
