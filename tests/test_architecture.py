"""The package arrows and the vendor-SDK boundary, checked by import-linter from the suite; the
rooms of `agent/` (its subpackages) and what the wheel ships."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, cast

import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        exit_code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    finally:
        os.chdir(cwd)
    report = capsys.readouterr().out
    assert exit_code == 0, report
    assert "0 broken" in report


SELF_CONTAINED = ("tests", "scripts", "bench", ".ci")
"""What a fresh clone runs: none of it may read a folder beside or above the checkout."""
OUTSIDE_PATHS = re.compile(r"""/work/shared(?![-\w])|\.\./shared\b|parent / ["']shared["']""")


def test_tests_scripts_and_benchmarks_read_nothing_outside_the_repository() -> None:
    offenders: list[str] = []
    for folder in SELF_CONTAINED:
        for path in sorted((ROOT / folder).rglob("*")):
            if "node_modules" in path.parts or not path.is_file():
                continue
            if path.suffix not in {".py", ".mjs", ".js", ".sh", ".toml", ".json", ""}:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            offenders += [
                f"{path.relative_to(ROOT)}: {match.group()}"
                for match in OUTSIDE_PATHS.finditer(text)
            ]
    offenders = [o for o in offenders if not o.startswith("tests/test_architecture.py")]
    assert offenders == []


PACKAGES = ("providers", "sessions", "agent", "acp_server", "earshot")
MAX_AGENT_MODULES = 12
"""`agent/` keeps its shared vocabulary at the top and everything else in rooms (issue 27)."""


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _agent_rooms() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "agent").glob("*/__init__.py"))


def _agent_modules() -> list[str]:
    return sorted(p.stem for p in (ROOT / "agent").glob("*.py") if p.stem != "__init__")


def test_agent_keeps_at_most_a_dozen_top_level_modules() -> None:
    assert len(_agent_modules()) <= MAX_AGENT_MODULES, _agent_modules()


def test_the_agent_contract_names_every_room_and_module_at_the_top_and_nothing_inside() -> None:
    contracts = cast("list[dict[str, Any]]", _pyproject()["tool"]["importlinter"]["contracts"])
    (inside,) = [c for c in contracts if c.get("containers") == ["agent"]]
    named = [
        name.strip()
        for layer in cast("list[str]", inside["layers"])
        for name in re.split(r"[:|]", layer)
    ]
    assert sorted(named) == sorted(_agent_rooms() + _agent_modules())


def test_every_room_has_a_face_and_says_what_it_owns() -> None:
    missing = [
        room
        for room in _agent_rooms()
        if "__all__" not in (ROOT / "agent" / room / "__init__.py").read_text(encoding="utf-8")
        or not (ROOT / "agent" / room / "AGENTS.md").is_file()
    ]
    assert missing == []


def test_the_wheel_lists_every_package() -> None:
    """setuptools ships the packages listed in pyproject.toml, not the ones it finds."""
    found = sorted(
        ".".join(path.parent.relative_to(ROOT).parts)
        for package in PACKAGES
        for path in (ROOT / package).rglob("__init__.py")
        if "node_modules" not in path.parts
    )
    assert sorted(_pyproject()["tool"]["setuptools"]["packages"]) == found


LOOP_STARTERS = re.compile(
    r"\b(?:anyio|asyncio)\.run\(|\bnew_event_loop\(|BlockingPortal|start_blocking_portal|from_thread"
)
ENTRY_POINTS = {
    "acp_server/interrupt.py",  # `earshot --stdio` and `earshot serve`: the process's one loop
    "earshot/cli.py",
    "earshot/doctor.py",
    "earshot/eval_cli.py",
    "earshot/evals/runner.py",  # one task per process (a Ray worker's, or the CLI's)
    "earshot/print_mode.py",
}
"""Where a process's one event loop starts, in its main thread."""
PROCESS_WIDE_THREAD_LOOPS = {"agent/sandbox/proxy.py"}
"""The sandbox's HTTP proxy serves every session of the process, whichever loop each runs on
(a test's loop comes and goes), from a loop in a thread of its own: no session's work runs there."""


def test_no_session_work_runs_on_a_second_event_loop() -> None:
    """A session's background work runs in its block (`agent.tasks.SessionTasks`), on the
    process's one loop (issue 27): nothing starts another loop, or reaches into one from a
    thread, but the entry points and the sandbox's process-wide proxy."""
    found = sorted(
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if LOOP_STARTERS.search(path.read_text(encoding="utf-8"))
    )
    assert set(found) <= ENTRY_POINTS | PROCESS_WIDE_THREAD_LOOPS, found
