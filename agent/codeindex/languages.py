"""Which grammar parses a file, and what one file yields: definitions, references, search terms.

The grammars are the tree-sitter project's own Python wheels (`tree-sitter-python`,
`tree-sitter-typescript`...), one small package per language, each shipping the `tags.scm` query
written for exactly that grammar version, so a grammar update cannot leave a stale query
behind. (`tree-sitter-language-pack` 1.x downloads its parsers from GitHub on first use, which
fails offline and runs native code fetched at run time; its last bundling release, 0.13, unpacks
to 190 MB for 300+ languages.) A language whose wheel is missing is indexed as text: its
identifiers still feed search and references, it just defines nothing.

Only the definition patterns of a tags query run (the others are disabled: references come from
one regular expression over the bytes, `agent.codeindex.terms`), which makes the query about
three times faster. Grammars and queries load on first use, per language, in whichever worker
thread needs them, and are shared: a `tree_sitter.Query` is immutable once built, and every call
makes its own `Parser` and `QueryCursor`.
"""

from __future__ import annotations

import importlib
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Final

from agent.codeindex.terms import identifiers, terms_text

if TYPE_CHECKING:
    import tree_sitter


@dataclass(frozen=True, slots=True)
class Grammar:
    """Where a language's grammar lives: the wheel's module, the function returning the
    language, and the modules whose tags queries it uses (TypeScript extends JavaScript's)."""

    module: str
    function: str = "language"
    queries: tuple[str, ...] = ()
    """Modules whose `TAGS_QUERY` is used, in order; empty means `module` alone."""


GRAMMARS: Final[dict[str, Grammar]] = {
    "python": Grammar("tree_sitter_python"),
    "javascript": Grammar("tree_sitter_javascript"),
    "typescript": Grammar(
        "tree_sitter_typescript",
        "language_typescript",
        ("tree_sitter_javascript", "tree_sitter_typescript"),
    ),
    "tsx": Grammar(
        "tree_sitter_typescript",
        "language_tsx",
        ("tree_sitter_javascript", "tree_sitter_typescript"),
    ),
    "go": Grammar("tree_sitter_go"),
    "rust": Grammar("tree_sitter_rust"),
    "java": Grammar("tree_sitter_java"),
    "c": Grammar("tree_sitter_c"),
    "cpp": Grammar("tree_sitter_cpp"),
    "ruby": Grammar("tree_sitter_ruby"),
}

LANGUAGE_BY_SUFFIX: Final[dict[str, str]] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".rb": "ruby",
}
TEXT_SUFFIXES: Final[frozenset[str]] = frozenset(
    {
        ".md", ".rst", ".txt", ".toml", ".yaml", ".yml", ".ini", ".cfg", ".sh",
        ".bash", ".zsh", ".fish", ".lua", ".kt", ".kts", ".scala", ".swift", ".cs", ".php",
        ".ex", ".exs", ".erl", ".hs", ".ml", ".mli", ".zig", ".sql", ".proto", ".graphql",
        ".css", ".scss", ".html", ".vue", ".svelte", ".tf", ".nix", ".dart", ".r", ".jl",
        ".pl", ".pm", ".m", ".mm", ".gradle", ".cmake", ".mk", ".el", ".clj", ".vim",
    }
)  # fmt: skip
"""Indexed for search (identifiers and words), without definitions. Not `.json`: a service
account key or a token cache is JSON more often than anything worth searching by name."""
TEXT_NAMES: Final[frozenset[str]] = frozenset({"Makefile", "Dockerfile", "README", "Justfile"})

MAX_LINE_TEXT: Final = 160
"""A definition's line is shown at most this long in the map."""


def language_for(path: str) -> str | None:
    """The language of a path by its suffix, or None (not parsed; maybe text)."""
    return LANGUAGE_BY_SUFFIX.get(PurePosixPath(path).suffix.lower())


def is_indexed(path: str) -> bool:
    """Whether a file is worth indexing at all (source with a grammar, or known text)."""
    pure = PurePosixPath(path)
    suffix = pure.suffix.lower()
    return suffix in LANGUAGE_BY_SUFFIX or suffix in TEXT_SUFFIXES or pure.name in TEXT_NAMES


@dataclass(frozen=True, slots=True)
class Definition:
    """A name a file defines, where, and the line that shows it."""

    name: str
    kind: str
    """From the tags query: `class`, `function`, `method`, `interface`, `module`, `type`..."""
    line: int
    """1-based line of the name."""
    end_line: int
    """1-based last line of the definition (nesting in the map comes from these spans)."""
    text: str
    """The source line of the name, as written (indentation kept), cut to `MAX_LINE_TEXT`."""


@dataclass(frozen=True, slots=True)
class FileTags:
    """What one file contributes to the index."""

    language: str | None
    """None: indexed as text (no grammar for it, or its wheel is not installed)."""
    definitions: tuple[Definition, ...]
    references: Counter[str]
    """Every identifier with its count (`agent.codeindex.terms.identifiers`)."""
    terms: str
    """The identifiers' search terms, space separated (`agent.codeindex.terms.terms_text`)."""


class _Loaded:
    """A language's tree-sitter objects, built once."""

    def __init__(self, language: tree_sitter.Language, query: tree_sitter.Query) -> None:
        self.language = language
        self.query = query


_loaded: dict[str, _Loaded | None] = {}
_load_lock = threading.Lock()


def _load(name: str) -> _Loaded | None:
    """The grammar and definition query of `name`, or None when its wheel is not installed."""
    with _load_lock:
        if name in _loaded:
            return _loaded[name]
        grammar = GRAMMARS[name]
        try:
            import tree_sitter

            module: Any = importlib.import_module(grammar.module)
            capsule: object = getattr(module, grammar.function)()
            language = tree_sitter.Language(capsule)
            sources = [
                str(importlib.import_module(query_module).TAGS_QUERY)
                for query_module in grammar.queries or (grammar.module,)
            ]
        except (ImportError, AttributeError):
            _loaded[name] = None
            return None
        text = "\n".join(sources)
        query = tree_sitter.Query(language, text)
        encoded = text.encode("utf-8")
        for pattern in range(query.pattern_count):
            source = encoded[
                query.start_byte_for_pattern(pattern) : query.end_byte_for_pattern(pattern)
            ]
            if b"@definition." not in source:
                query.disable_pattern(pattern)
        loaded = _Loaded(language, query)
        _loaded[name] = loaded
        return loaded


def grammar_available(name: str) -> bool:
    """Whether the grammar wheel of language `name` is installed (loads it)."""
    return name in GRAMMARS and _load(name) is not None


def extract(path: str, source: bytes) -> FileTags:
    """Definitions, references and search terms of one file's content."""
    counts = identifiers(source)
    language = language_for(path)
    loaded = _load(language) if language is not None else None
    if loaded is None:
        return FileTags(language=None, definitions=(), references=counts, terms=terms_text(counts))
    return FileTags(
        language=language,
        definitions=_definitions(loaded, source),
        references=counts,
        terms=terms_text(counts),
    )


def _definitions(loaded: _Loaded, source: bytes) -> tuple[Definition, ...]:
    import tree_sitter

    tree = tree_sitter.Parser(loaded.language).parse(source)
    lines = source.split(b"\n")
    found: dict[tuple[str, int], Definition] = {}
    for _pattern, captures in tree_sitter.QueryCursor(loaded.query).matches(tree.root_node):
        names = captures.get("name")
        if not names:
            continue
        kind = next((key[11:] for key in captures if key.startswith("definition.")), None)
        if kind is None:
            continue
        node = captures[f"definition.{kind}"][0]
        name_node = names[0]
        name = (name_node.text or b"").decode("utf-8", "replace")
        if not name:
            continue
        row = name_node.start_point.row
        key = (name, name_node.start_byte)
        if key in found:  # two patterns matched one definition (Rust methods, for one)
            continue
        text = lines[row].decode("utf-8", "replace").rstrip() if row < len(lines) else name
        found[key] = Definition(
            name=name,
            kind=kind,
            line=row + 1,
            end_line=max(node.end_point.row, row) + 1,
            text=text[:MAX_LINE_TEXT],
        )
    return tuple(sorted(found.values(), key=lambda definition: (definition.line, definition.name)))
