"""Reading and parsing files for the index, in this process or in a worker process.

`extract_paths` is the CPU-heavy half of a refresh (read, hash, parse, collect identifiers);
it has no state, so `agent.codeindex.worker` runs it in separate processes for a large refresh
(tree-sitter holds the GIL while it parses, so threads would not use a second core), and the
engine runs it in a thread for a small one. `encode`/`decode` carry its results over the
worker's pipe as JSON.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from agent.codeindex.files import StatEntry, held_root, read_source
from agent.codeindex.languages import GRAMMARS, Definition, FileTags, extract, language_for
from agent.codeindex.store import digest

EXTRACTOR_VERSION: Final = "1"
"""Bump when `extract` changes what it produces: every record is then re-read."""

Known = Mapping[str, tuple[bytes, str]]
"""path -> (digest, extractor) of what the index holds for it."""


@cache
def extractor_id(language: str | None) -> str:
    """Which extractor indexes files of `language`: records made by another are re-read."""
    if language is None:
        return f"{EXTRACTOR_VERSION}:text"
    from importlib.metadata import PackageNotFoundError, version

    distribution = GRAMMARS[language].module.replace("_", "-")
    try:
        return f"{EXTRACTOR_VERSION}:{language}:{version(distribution)}"
    except PackageNotFoundError:
        return f"{EXTRACTOR_VERSION}:{language}:missing"


@dataclass(frozen=True, slots=True)
class Extracted:
    """One file, read: gone (`stat` None), as indexed (`tags` None), or parsed anew."""

    path: str
    stat: StatEntry | None
    digest: bytes = b""
    extractor: str = ""
    checked_ns: int = 0
    tags: FileTags | None = None


def extract_paths(root: Path, paths: Sequence[str], known: Known) -> list[Extracted]:
    """Read each file and parse those whose content or extractor differs from `known`."""
    found: list[Extracted] = []
    held = held_root(root)
    try:
        for path in paths:
            found.append(_extracted(held if held is not None else root, path, known))
    finally:
        if held is not None:
            os.close(held)
    return found


def _extracted(root: Path | int, path: str, known: Known) -> Extracted:
    read = read_source(root, path)
    if read is None:
        return Extracted(path, None)
    content, entry = read
    hashed = digest(content)
    expected = extractor_id(language_for(path))
    now = time.time_ns()
    if known.get(path) == (hashed, expected):
        return Extracted(path, entry, hashed, expected, now)
    return Extracted(path, entry, hashed, expected, now, extract(path, content))


def encode(item: Extracted) -> list[Any]:
    if item.stat is None:
        return [item.path]
    head = [item.path, item.stat.mtime_ns, item.stat.size, item.digest.hex(), item.extractor,
            item.checked_ns]  # fmt: skip
    tags = item.tags
    if tags is None:
        return head
    definitions = [[d.name, d.kind, d.line, d.end_line, d.text] for d in tags.definitions]
    return [*head, tags.language, definitions, dict(tags.references), tags.terms]


def decode(row: list[Any]) -> Extracted:
    """The inverse of `encode`.

    Raises:
        ValueError, TypeError, IndexError: a malformed row (a worker gone wrong).
    """
    if len(row) == 1:
        return Extracted(str(row[0]), None)
    path, mtime_ns, size, hashed, extractor, checked = row[:6]
    stat = StatEntry(mtime_ns=int(mtime_ns), size=int(size))
    tags = None
    if len(row) > 6:
        language, definitions, references, terms = row[6:10]
        tags = FileTags(
            language=language,
            definitions=tuple(Definition(*item) for item in definitions),
            references=Counter({str(key): int(value) for key, value in references.items()}),
            terms=str(terms),
        )
    return Extracted(str(path), stat, bytes.fromhex(hashed), str(extractor), int(checked), tags)
