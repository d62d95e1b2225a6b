"""bashlex, loaded with its parse tables precomputed.

bashlex 0.18 vendors PLY 4's yacc, which caches nothing: every `import bashlex` builds the LALR
tables of bash's grammar again, about 75 ms of CPU (a third of a second under a profiler), paid
by the first command a session checks and by every earshot process that checks one.
`grammar_tables.json` holds the tables bashlex builds, with a digest of the bashlex sources they
came from (`parser.py`, the grammar, and `yacc.py`, the table builder); `load_bashlex` hands
bashlex's `yacc.yacc` a parser made from them while bashlex imports, then puts the original back.
When the installed sources differ (another bashlex), the digest does not match and bashlex
builds its own tables as before: slower, never wrong. `tests/agent/shell/test_grammar.py`
rebuilds the tables from the installed bashlex and compares them with the file
(`python -m agent.shell.grammar` rewrites it).

Why not pickle the built parser: a pickle runs code when loaded, and a cache file is something a
command could replace; this is read-only data shipped with earshot, read as JSON.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import sys
import threading
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

TABLES = Path(__file__).with_name("grammar_tables.json")
_SOURCES = ("parser.py", "yacc.py")
_lock = threading.Lock()

Json = dict[str, Any]


class _Production:
    """What bashlex's `LRParser` reads of a production (PLY's `MiniProduction`)."""

    __slots__ = ("callable", "func", "len", "name", "str")

    def __init__(self, name: str, length: int, text: str, func: str | None) -> None:
        self.name = name
        self.len = length
        self.str = text
        self.func = func
        self.callable: Callable[..., Any] | None = None

    def __str__(self) -> str:
        return self.str


class _Tables:
    """The `lrtab` argument of PLY's `LRParser`."""

    def __init__(self, data: Json, functions: dict[str, Any]) -> None:
        self.lr_action = {int(state): dict(row) for state, row in data["action"].items()}
        self.lr_goto = {int(state): dict(row) for state, row in data["goto"].items()}
        self.lr_productions = [_Production(*row) for row in data["productions"]]
        for production in self.lr_productions:
            if production.func is not None:
                production.callable = functions[production.func]


def source_digest(package_dir: Path) -> str:
    digest = hashlib.sha256()
    for name in _SOURCES:
        digest.update((package_dir / name).read_bytes())
    return digest.hexdigest()


def load_bashlex() -> ModuleType:
    """`bashlex`, imported once, from the shipped tables when they are its own."""
    loaded = sys.modules.get("bashlex")
    if loaded is not None and hasattr(loaded, "parse"):
        return loaded
    with _lock:
        loaded = sys.modules.get("bashlex")
        if loaded is not None and hasattr(loaded, "parse"):
            return loaded
        spec = importlib.util.find_spec("bashlex")
        tables = _shipped_tables(spec)
        if spec is None or spec.loader is None or tables is None:
            return importlib.import_module("bashlex")
        return _import_with_tables(spec, tables)


def _shipped_tables(spec: ModuleSpec | None) -> Json | None:
    if spec is None or spec.origin is None:
        return None
    try:
        data: Json = json.loads(TABLES.read_bytes())
        if data.get("source_digest") != source_digest(Path(spec.origin).parent):
            return None
    except (OSError, ValueError):
        return None
    return data


def _import_with_tables(spec: ModuleSpec, tables: Json) -> ModuleType:
    """The package's module made first and its `__init__` run last, so that `bashlex.yacc` can be
    imported (it imports `bashlex.utils`) and given the tables before `bashlex.parser` calls it."""
    assert spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules["bashlex"] = package
    try:
        yacc: Any = importlib.import_module("bashlex.yacc")
        original = yacc.yacc

        def from_tables(*_args: object, **_kwargs: object) -> Any:
            # Called from bashlex.parser's module body: its functions are the grammar's actions.
            functions: dict[str, Any] = sys._getframe(1).f_globals  # pyright: ignore[reportPrivateUsage]
            parser = yacc.LRParser(_Tables(tables, functions), functions.get("p_error"))
            yacc.parse = parser.parse
            return parser

        yacc.yacc = from_tables
        try:
            spec.loader.exec_module(package)
        finally:
            yacc.yacc = original
    except BaseException:
        for name in [name for name in sys.modules if name.split(".")[0] == "bashlex"]:
            del sys.modules[name]
        raise
    return package


def built_tables() -> Json:
    """The tables the installed bashlex builds, as `grammar_tables.json` holds them."""
    bashlex = load_bashlex()
    parser_module: Any = bashlex.parser
    yacc: Any = importlib.import_module("bashlex.yacc")
    built: Any = yacc.yacc(module=parser_module, debug=False, write_tables=False)
    return {
        "source_digest": source_digest(Path(parser_module.__file__).parent),
        "action": {str(state): row for state, row in built.action.items()},
        "goto": {str(state): row for state, row in built.goto.items()},
        "productions": [[p.name, p.len, p.str, p.func] for p in built.productions],
    }


def render(tables: Json) -> str:
    return json.dumps(tables, separators=(",", ":"), sort_keys=True) + "\n"


if __name__ == "__main__":
    TABLES.write_text(render(built_tables()), encoding="utf-8")
    print(f"wrote {TABLES}")
