"""The index on disk: one sqlite database per work tree under earshot's data dir.

`files` holds, per path, what decides whether the entry is current (`mtime_ns`, `size`, the
content `digest`, when it was read, and which extractor produced it) and what the extractor
produced (definitions, and references with their counts). `search` is an FTS5 table over the
path's words, the definitions' names and the identifiers' terms, whose `bm25()` ranks search
hits: SQLite's own BM25, which updates one file at a time and lives on disk, where `bm25s` would
rebuild a matrix over every file in memory for each change (and load numpy first). The FTS
table is contentless (it keeps the index, not a second copy of the terms: a fifth of the size);
removing a file's row re-derives its terms from the stored references, which produce them.

It is a cache, and treated as one: a database that cannot be opened or has another schema
version is deleted and rebuilt. Every method takes the store's lock (one connection, used from
the worker threads of the index); WAL lets another earshot process on the same work tree read
while this one writes, and each file's rows change in one transaction, so a reader never sees
half of a file's entry. Refreshes have one writer at a time (`agent.codeindex.index`).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from sys import intern
from typing import Final

import orjson

from agent.codeindex.files import StatEntry
from agent.codeindex.languages import Definition, FileTags
from agent.codeindex.terms import path_terms, terms_text

SCHEMA_VERSION: Final = "3"
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT UNIQUE NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    digest BLOB NOT NULL,
    checked_ns INTEGER NOT NULL,
    extractor TEXT NOT NULL,
    names TEXT NOT NULL,
    definitions BLOB NOT NULL,
    refs BLOB NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS search USING fts5(
    path, names, body, tokenize = 'unicode61', content = ''
);
CREATE VIRTUAL TABLE IF NOT EXISTS search_terms USING fts5vocab(search, 'row');
"""
SEARCH_WEIGHTS: Final = (2.0, 6.0, 1.0)
"""bm25() column weights: a query word in a definition's name counts most, then in the path."""


def digest(content: bytes) -> bytes:
    return hashlib.blake2b(content, digest_size=16).digest()


@dataclass(frozen=True, slots=True)
class FileStamp:
    """How a file was when it was indexed."""

    mtime_ns: int
    size: int
    digest: bytes
    checked_ns: int
    """When it was read (time.time_ns); a file modified within the clock's granularity of that
    may have changed again unseen, so it is re-read by content next time (`index.RACY_NS`)."""
    extractor: str


@dataclass(frozen=True, slots=True)
class Indexed:
    """One file to write: its stat, digest and what the extractor found."""

    path: str
    stat: StatEntry
    digest: bytes
    checked_ns: int
    extractor: str
    tags: FileTags


@dataclass(frozen=True, slots=True)
class FileSummary:
    """What the reference graph needs of a file: two tuples of interned strings rather than a
    dict, because 20,000 files hold millions of references and mostly the same names."""

    names: tuple[str, ...]
    """The names it defines."""
    references: tuple[str, ...]
    counts: tuple[int, ...]
    """How often each of `references` occurs."""

    @classmethod
    def of(cls, names: Iterable[str], references: Mapping[str, int]) -> FileSummary:
        return cls(
            tuple(intern(name) for name in names),
            tuple(intern(name) for name in references),
            tuple(references.values()),
        )


class Store:
    """The sqlite cache of one work tree."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db = _open(path)
        self._data_version = self._version_now()

    def changed_elsewhere(self) -> bool:
        """Whether another connection (another session, another process) committed a change
        since the last call (or the open): SQLite's `data_version`, which this connection's own
        commits leave alone."""
        with self._lock:
            now = self._version_now()
            changed, self._data_version = now != self._data_version, now
        return changed

    def _version_now(self) -> int:
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def records(self) -> dict[str, FileStamp]:
        with self._lock:
            rows = self._db.execute(
                "SELECT path, mtime_ns, size, digest, checked_ns, extractor FROM files"
            ).fetchall()
        return {row[0]: FileStamp(*row[1:]) for row in rows}

    def summaries(self) -> Iterator[tuple[str, FileSummary]]:
        with self._lock:
            rows = self._db.execute("SELECT path, names, refs FROM files").fetchall()
        for path, names, refs in rows:
            yield path, FileSummary.of(names.split(), orjson.loads(refs))

    def write(self, batch: Sequence[Indexed]) -> None:
        """Insert or replace files and their search rows, in one transaction."""
        with self._lock, self._db:
            for item in batch:
                tags = item.tags
                names = " ".join(definition.name for definition in tags.definitions)
                definitions = orjson.dumps(
                    [[d.name, d.kind, d.line, d.end_line, d.text] for d in tags.definitions]
                )
                refs = orjson.dumps(dict(tags.references))
                self._remove(item.path)
                cursor = self._db.execute(
                    "INSERT INTO files (path, mtime_ns, size, digest, checked_ns, extractor, "
                    "names, definitions, refs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (item.path, item.stat.mtime_ns, item.stat.size, item.digest,
                     item.checked_ns, item.extractor, names, definitions, refs),
                )  # fmt: skip
                name_terms = path_terms(names)
                self._db.execute(
                    "INSERT INTO search (rowid, path, names, body) VALUES (?, ?, ?, ?)",
                    (cursor.lastrowid, path_terms(item.path), name_terms, tags.terms),
                )

    def touch(self, batch: Iterable[tuple[str, StatEntry, int]]) -> None:
        """Record a new stat (and check time) for files whose content did not change."""
        with self._lock, self._db:
            self._db.executemany(
                "UPDATE files SET mtime_ns = ?, size = ?, checked_ns = ? WHERE path = ?",
                [(entry.mtime_ns, entry.size, checked, path) for path, entry, checked in batch],
            )

    def delete(self, paths: Iterable[str]) -> None:
        with self._lock, self._db:
            for path in paths:
                self._remove(path)

    def _remove(self, path: str) -> None:
        """Delete a file's rows (in the caller's transaction). A contentless FTS5 row is removed
        by giving its terms again: the same as those inserted, derived from the stored names and
        references."""
        row = self._db.execute(
            "SELECT id, names, refs FROM files WHERE path = ?", (path,)
        ).fetchone()
        if row is None:
            return
        file_id, names, refs = row
        self._db.execute(
            "INSERT INTO search (search, rowid, path, names, body) VALUES ('delete', ?, ?, ?, ?)",
            (file_id, path_terms(path), path_terms(names), terms_text(Counter(orjson.loads(refs)))),
        )
        self._db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def definitions(self, paths: Iterable[str]) -> dict[str, tuple[Definition, ...]]:
        wanted = list(dict.fromkeys(paths))
        found: dict[str, tuple[Definition, ...]] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT path, definitions FROM files WHERE path IN ({marks})", chunk
                ).fetchall()
                for path, blob in rows:
                    found[path] = tuple(Definition(*item) for item in orjson.loads(blob))
        return found

    def search(self, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """Files matching any of `terms` (already split, `agent.codeindex.terms`), best first,
        with a positive BM25 score (larger is better)."""
        if not terms:
            return []
        with self._lock:
            terms = self._informative(terms)
        # Terms are [a-z0-9]+ by construction; quoting each keeps FTS5 syntax out regardless.
        match = " OR ".join('"' + term.replace('"', "") + '"' for term in terms)
        weights = ", ".join(str(weight) for weight in SEARCH_WEIGHTS)
        with self._lock:
            rows = self._db.execute(
                f"SELECT files.path, bm25(search, {weights}) AS score FROM search "
                "JOIN files ON files.id = search.rowid WHERE search MATCH ? "
                "ORDER BY score LIMIT ?",
                (match, limit),
            ).fetchall()
        return [(path, -score) for path, score in rows]

    def _informative(self, terms: Sequence[str]) -> list[str]:
        """`terms` without those in more than half the files (`compute` in a tree where every
        file has a `compute_*`): their BM25 weight is next to nothing, and matching them would
        score every file. The rarest term is kept whatever its frequency."""
        files = self._db.execute("SELECT count(*) FROM files").fetchone()[0] or 1
        frequency: dict[str, int] = {}
        for term in terms:
            row = self._db.execute("SELECT doc FROM search_terms WHERE term = ?", (term,))
            found = row.fetchone()
            frequency[term] = found[0] if found else 0
        kept = [term for term in terms if frequency[term] * 2 <= files]
        return kept or [min(terms, key=lambda term: frequency[term])]

    def size_bytes(self) -> int:
        return sum(
            part.stat().st_size for part in (self.path, Path(f"{self.path}-wal")) if part.exists()
        )


def _open(path: Path) -> sqlite3.Connection:
    """The database at `path`; one that cannot be used (corrupt, another schema) is replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _connect(path)
    except sqlite3.DatabaseError:
        for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            stale.unlink(missing_ok=True)
        return _connect(path)


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout = 5000")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        version = _version(db)
        if version not in (None, SCHEMA_VERSION):
            raise sqlite3.DatabaseError(f"schema version {version}")
        db.executescript(_SCHEMA)
        db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,)
        )
    except sqlite3.Error:
        db.close()
        raise
    # Transactions are explicit (`with db:`) from here on.
    db.isolation_level = "DEFERRED"
    return db


def _version(db: sqlite3.Connection) -> str | None:
    exists = db.execute("SELECT name FROM sqlite_master WHERE name = 'meta'").fetchone()
    if exists is None:
        return None
    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    return None if row is None else str(row[0])
