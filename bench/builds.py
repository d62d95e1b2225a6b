"""Which `earshot` a turn benchmark spawns, and A/B comparisons between trees.

By default the benchmarks measure this tree installed from its wheel in a throwaway venv (compiled
bytecode, as a user gets it). `--dev-venv` measures `.venv/bin/earshot` (editable), `--earshot
PATH` any installed one, and each `--tree DIR` (another checkout, e.g. `git worktree add
/tmp/base main`) adds a build of that tree: the builds then take turns, run by run, so that the
load of a shared machine hits them alike, and the results show them side by side.
"""

from __future__ import annotations

import argparse
import subprocess
from dataclasses import dataclass
from pathlib import Path

from wheel_venv import DEV_VENV, ROOT, build_venv


@dataclass(frozen=True)
class Build:
    label: str
    earshot: Path
    where: str
    """What it is, for the results."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dev-venv", action="store_true", help="measure .venv/bin/earshot")
    parser.add_argument("--earshot", type=Path, help="measure this installed earshot")
    parser.add_argument(
        "--tree",
        type=Path,
        action="append",
        default=[],
        help="also measure this checkout (repeatable); the builds take turns",
    )


def builds(args: argparse.Namespace, work: Path) -> list[Build]:
    """The builds to measure, this tree's first."""
    if args.earshot is not None:
        found = [Build("earshot", args.earshot.resolve(), f"`{args.earshot}`")]
    elif args.dev_venv:
        where = f"`.venv/bin/earshot` (editable install, tree at {tree_version(ROOT)})"
        found = [Build("this tree", DEV_VENV / "bin" / "earshot", where)]
    else:
        earshot, _ = build_venv(work)
        where = f"this tree (at {tree_version(ROOT)}) installed from its wheel in a fresh venv"
        found = [Build("this tree", earshot, where)]
    for index, tree in enumerate(args.tree):
        earshot, _ = build_venv(work, tree.resolve(), name=f"venv-{index}")
        label = f"{tree.name} ({tree_version(tree)})"
        found.append(Build(label, earshot, f"`{tree}` at {tree_version(tree)}, from its wheel"))
    return found


def tree_version(tree: Path) -> str:
    """The commit a tree is at, and whether it has uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":!bench/RESULTS.md",
            ],
            cwd=tree,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head or 'unknown'}{' with uncommitted changes' if dirty else ''}"
