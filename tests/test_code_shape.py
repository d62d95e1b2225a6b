"""The shape the guide asks of the code, checked from the source (nothing here imports a module
but the `__all__` checks): no source file over 600 lines, no class with more than 20 methods, no
import cycle inside a package (imports inside functions and under `TYPE_CHECKING` count: a cycle
hidden in a function is still a cycle a reader has to untangle), and `__all__` lists that say
what a module offers (after httpx's `tests/test_exported_members.py`)."""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import cast

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("providers", "sessions", "agent", "acp_server", "earshot")
MAX_LINES = 600
MAX_METHODS = 20


@dataclass(frozen=True)
class Module:
    name: str
    """Dotted name, `agent.tools` for `agent/tools/__init__.py`."""
    path: Path

    @property
    def package(self) -> str:
        """The package this module belongs to (itself for a package's `__init__`)."""
        if self.path.name == "__init__.py":
            return self.name
        return self.name.rpartition(".")[0]

    @property
    def tree(self) -> ast.Module:
        return _parse(self.path)


@cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@cache
def modules() -> tuple[Module, ...]:
    found: list[Module] = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append(Module(".".join(parts), path))
    return tuple(found)


def _where(module: Module) -> str:
    return str(module.path.relative_to(ROOT))


# ---------------------------------------------------------------------------------- sizes


GENERATED = "Do not edit: change the generator and run it again."
"""The header line of the modules `scripts.gen_acp_types` writes (`acp_server/protocol/`)."""


def test_no_source_file_is_over_600_lines() -> None:
    """Except generated ones: nobody reads or edits them as code, and the ACP v2 schema's
    flattened unions (every `session/update` and `state_update` variant a class of its own)
    would otherwise be split along lines that mean nothing."""
    long = {
        _where(module): lines
        for module in modules()
        if (lines := len((text := module.path.read_text(encoding="utf-8")).splitlines()))
        > MAX_LINES
        and GENERATED not in text
    }
    assert long == {}


def _classes(tree: ast.AST) -> Iterator[ast.ClassDef]:
    yield from (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef))


def test_distinct_types_have_distinct_names() -> None:
    """No two public classes share a name (issue 27: `Transcript`, `SessionSetup` and
    `MissingCredentials` each named two different things): a reader, a grep and an import
    completion must find one type. The generated wire types (`acp_server/protocol/`) are
    imported under other names where they meet the agent's."""
    homes: dict[str, list[str]] = {}
    for module in modules():
        if module.name.startswith("acp_server.protocol"):
            continue
        for cls in _classes(module.tree):
            if not cls.name.startswith("_"):
                homes.setdefault(cls.name, []).append(_where(module))
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


def _is_dataclass_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (isinstance(target, ast.Name) and target.id == "dataclass") or (
        isinstance(target, ast.Attribute) and target.attr == "dataclass"
    )


def test_every_stdlib_dataclass_has_slots() -> None:
    """The rule (ARCHITECTURE.md, "Records and dataclasses"): a value class is a `Record` unless
    it needs what only `@dataclass(slots=True)` gives; a dataclass without slots has no such
    reason, and is a record instead."""
    slotless: list[str] = []
    for module in modules():
        for cls in _classes(module.tree):
            for decorator in cls.decorator_list:
                if not _is_dataclass_decorator(decorator):
                    continue
                keywords = decorator.keywords if isinstance(decorator, ast.Call) else []
                slots = [k.value for k in keywords if k.arg == "slots"]
                if not (slots and isinstance(slots[0], ast.Constant) and slots[0].value is True):
                    slotless.append(f"{_where(module)}:{cls.lineno} {cls.name}")
    assert slotless == []


def test_no_class_has_more_than_20_methods() -> None:
    big: dict[str, int] = {}
    for module in modules():
        for cls in _classes(module.tree):
            methods = [
                node
                for node in cls.body
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and not any(_is_overload(decorator) for decorator in node.decorator_list)
            ]
            if len(methods) > MAX_METHODS:
                big[f"{_where(module)}:{cls.lineno} {cls.name}"] = len(methods)
    assert big == {}


def _is_overload(decorator: ast.expr) -> bool:
    """`@overload` stubs are one method's signatures, not methods of their own."""
    return (isinstance(decorator, ast.Name) and decorator.id == "overload") or (
        isinstance(decorator, ast.Attribute) and decorator.attr == "overload"
    )


# ------------------------------------------------------------------------------ cycles


@dataclass(frozen=True)
class Edge:
    target: str
    line: int
    where: str
    """"top level", "in a function" or "under TYPE_CHECKING"."""


def import_edges(package: str) -> dict[str, list[Edge]]:
    """Module -> its imports of modules of the same top-level package, from every import
    statement anywhere in its source. `from a.b import c` is an edge to `a.b.c` when that is a
    module, else to `a.b` (whose `__init__` then runs)."""
    names = {module.name for module in modules() if module.name.split(".")[0] == package}
    edges: dict[str, list[Edge]] = {name: [] for name in names}
    for module in modules():
        if module.name not in names:
            continue
        for node, where in _imports(module.tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _absolute(module, node)
                for alias in node.names:
                    child = f"{base}.{alias.name}"
                    targets.append(child if child in names else base)
            edges[module.name] += [
                Edge(target, node.lineno, where)
                for target in dict.fromkeys(targets)
                if target in names and target != module.name
            ]
    return edges


def _imports(
    tree: ast.AST, where: str = "top level"
) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, where
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _imports(node, "in a function")
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                yield from _imports(
                    ast.Module(body=[child], type_ignores=[]), "under TYPE_CHECKING"
                )
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), where)
        else:
            yield from _imports(node, where)


def import_graph(package: str) -> dict[str, set[str]]:
    return {name: {edge.target for edge in edges} for name, edges in import_edges(package).items()}


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    # Relative imports are banned by ruff (TID252); resolved anyway so a stray one still counts.
    parts = module.package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for target in sorted(graph[name]):
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(found)


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_inside_a_package(package: str) -> None:
    edges = import_edges(package)
    found = cycles({name: {edge.target for edge in out} for name, out in edges.items()})
    described = [
        "cycle: "
        + ", ".join(component)
        + "".join(
            f"\n    {name}:{edge.line} -> {edge.target} ({edge.where})"
            for name in component
            for edge in edges[name]
            if edge.target in component
        )
        for component in found
    ]
    assert not found, "\n".join(described)


# ------------------------------------------------------------------------------ __all__


def _dunder_all(module: Module) -> list[str] | None:
    for node in module.tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                assert node.value is not None
                value: object = ast.literal_eval(node.value)
                assert isinstance(value, list | tuple), f"{_where(module)}: __all__ is a list"
                return [str(name) for name in cast("list[object]", value)]
    return None


def exporting() -> list[Module]:
    return [module for module in modules() if _dunder_all(module) is not None]


def isort_order(name: str) -> tuple[int, list[str | int]]:
    """The order ruff's RUF022 keeps (isort-style): CONSTANTS, then Classes, then the rest, each
    in natural order (`x2` before `x10`)."""
    group = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return group, [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def test_dunder_all_lists_are_unique_public_and_sorted() -> None:
    wrong: dict[str, list[str]] = {}
    for module in exporting():
        names = _dunder_all(module) or []
        if names != sorted(set(names), key=isort_order) or any(n.startswith("_") for n in names):
            wrong[_where(module)] = sorted(set(names), key=isort_order)
    assert wrong == {}, "expected (sorted, unique, public):"


@pytest.mark.parametrize("module", exporting(), ids=lambda module: module.name)
def test_every_name_in_dunder_all_exists(module: Module) -> None:
    imported = importlib.import_module(module.name)
    assert [name for name in _dunder_all(module) or [] if not hasattr(imported, name)] == []


def test_names_used_from_outside_a_package_are_exported() -> None:
    """A module that says what it offers (`__all__`) says it whole: every name another package
    imports from it is listed."""
    exported = {module.name: set(_dunder_all(module) or []) for module in exporting()}
    packages = {module.name: module.package for module in exporting()}
    missing: dict[str, set[str]] = {}
    for importer in modules():
        for node in ast.walk(importer.tree):
            if not isinstance(node, ast.ImportFrom) or node.level:
                continue
            source = node.module or ""
            if source not in exported or importer.package == packages[source]:
                continue
            if importer.name.startswith(packages[source] + "."):
                continue  # a subpackage of the exporting one is inside it
            unlisted = {
                alias.name
                for alias in node.names
                if alias.name not in exported[source]
                and f"{source}.{alias.name}" not in {m.name for m in modules()}
            }
            if unlisted:
                missing.setdefault(f"{source} (imported by {importer.name})", set()).update(
                    unlisted
                )
    assert missing == {}
