"""The transcript's extension entry names have one home, `sessions.extensions`: no module writes or
compares one as a string of its own (two copies drift: a reader looking for a name the writer
renamed finds nothing and says so to nobody)."""

from __future__ import annotations

import ast
from pathlib import Path

from sessions import extensions

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGES = ("sessions", "agent", "acp_server", "earshot")


def _named_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a name of `extensions.ALL` is written out: an entry built with it, or an entry's
    `.name` compared with it."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                value = keyword.value
                if (
                    keyword.arg == "name"
                    and isinstance(value, ast.Constant)
                    and value.value in extensions.ALL
                ):
                    found.append((node.lineno, str(value.value)))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if not any(isinstance(side, ast.Attribute) and side.attr == "name" for side in sides):
                continue
            for side in sides:
                items = side.elts if isinstance(side, ast.Tuple | ast.Set | ast.List) else [side]
                for item in items:
                    if isinstance(item, ast.Constant) and item.value in extensions.ALL:
                        found.append((node.lineno, str(item.value)))
    return found


def test_extension_names_are_written_only_in_sessions_extensions() -> None:
    offenders: list[str] = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "sessions" / "extensions.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            offenders += [
                f"{path.relative_to(ROOT)}:{line}: {name!r}" for line, name in _named_literals(tree)
            ]
    assert offenders == []


def test_the_check_finds_a_name_written_out() -> None:
    tree = ast.parse('if entry.name in ("usage", "x"):\n    ExtensionEntry(name="tool_ui")\n')
    assert sorted(name for _, name in _named_literals(tree)) == ["tool_ui", "usage"]
