"""The index's blocking work, in steps small enough to run one at a time in a worker thread.

`IndexEngine` keeps what ranking needs in memory (each file's stat record and its defined and
referenced names; definitions' lines stay in the store and are read for the few files a map
shows) and the graph built from them. A refresh is `plan` (list the files and stat them: which
are new, changed, gone) then `process` over chunks of the changed ones, so the async side
(`agent.codeindex.index`) can report progress and honour cancellation between chunks.

A file counts as changed when its mtime or size differs from the record, when another extractor
(another grammar version) produced the record, or when it was modified within `RACY_NS` of being
read (it may have changed again within the clock's granularity: git's "racy" case); it is then
read and hashed, and parsed only if the content differs from what was indexed.

Every method is thread-safe. The graph is rebuilt at the end of a refresh or an update, and
queries use the last one built meanwhile (a new file's definitions join the map with the
rebuild; search finds them at once, from the full-text index).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent.codeindex.extraction import Extracted, Known, extract_paths, extractor_id
from agent.codeindex.files import StatEntry, list_files, stat_entry
from agent.codeindex.graph import RepoGraph, build_graph, personalized, ranked_definitions
from agent.codeindex.languages import Definition, language_for
from agent.codeindex.render import fit_to_budget, render_map
from agent.codeindex.store import FileStamp, FileSummary, Indexed, Store
from agent.codeindex.terms import identifier_terms, query_terms

RACY_NS: Final = 2_000_000_000
QUERY_SEEDS: Final = 20
"""How many search hits of a map's query seed its ranking."""

Visible = Callable[[str], bool]
"""Whether a relative path may be shown (a `Read` deny rule may hide it)."""


@dataclass(frozen=True, slots=True)
class Plan:
    listed: int
    changed: list[str]
    """To read: new, modified, racy, or indexed by another extractor."""
    removed: list[str]


@dataclass(frozen=True, slots=True)
class ChunkResult:
    parsed: int
    unchanged: int
    """Read, and the content was what the index already had."""
    removed: int
    """Gone (or no longer a regular file) by the time it was read."""


@dataclass(frozen=True, slots=True)
class MapResult:
    text: str
    definitions: int
    """How many definitions the map shows."""
    files: int
    total_definitions: int
    """How many the index knows."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    path: str
    score: float
    """BM25 (normalised to the best hit's) plus the structural rank's share."""
    definitions: tuple[Definition, ...]
    """The file's definitions whose names match the query, best first."""


class IndexEngine:
    """One work tree's index (see the module docstring)."""

    def __init__(self, root: Path, database: Path) -> None:
        self.root = root
        self.database = database
        self._store: Store | None = None
        self._records: dict[str, FileStamp] = {}
        self._summaries: dict[str, FileSummary] = {}
        self._lock = threading.RLock()
        self._graph_lock = threading.Lock()
        self._graph: RepoGraph | None = None
        self._version = 0
        self._graph_version = -1

    # ------------------------------------------------------------------ lifecycle

    def open(self) -> None:
        """Open the store and load what it holds (idempotent)."""
        with self._lock:
            if self._store is not None:
                return
            store = Store(self.database)
            self._records = store.records()
            self._summaries = dict(store.summaries())
            self._store = store
            self._version += 1

    def sync(self) -> None:
        """Load the store's records again if another session or process wrote to it since:
        the next `plan` then finds what that refresh already read."""
        self.open()
        if not self.store.changed_elsewhere():
            return
        store = self.store
        records, summaries = store.records(), dict(store.summaries())
        with self._lock:
            self._records, self._summaries = records, summaries
            self._version += 1

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    @property
    def store(self) -> Store:
        if self._store is None:
            self.open()
        assert self._store is not None
        return self._store

    @property
    def file_count(self) -> int:
        return len(self._records)

    # ------------------------------------------------------------------ refresh

    def plan(self) -> Plan:
        """List and stat the work tree's files against the records."""
        self.open()
        listed = list_files(self.root)
        with self._lock:
            records = dict(self._records)
        changed: list[str] = []
        present: set[str] = set()
        for path in listed:
            entry = stat_entry(self.root, path)
            if entry is None:
                continue
            present.add(path)
            record = records.get(path)
            if (
                record is None
                or record.mtime_ns != entry.mtime_ns
                or record.size != entry.size
                or record.extractor != extractor_id(language_for(path))
                or record.mtime_ns >= record.checked_ns - RACY_NS
            ):
                changed.append(path)
        removed = [path for path in records if path not in present]
        return Plan(listed=len(present), changed=changed, removed=removed)

    def process(self, paths: Sequence[str]) -> ChunkResult:
        """Read `paths` and index those whose content changed; forget those that are gone."""
        return self.apply(extract_paths(self.root, paths, self.known(paths)))

    def known(self, paths: Iterable[str]) -> Known:
        """What the index holds for `paths`: digest and extractor, for `extract_paths`."""
        with self._lock:
            records = self._records
            return {
                path: (record.digest, record.extractor)
                for path in paths
                if (record := records.get(path)) is not None
            }

    def apply(self, extracted: Sequence[Extracted]) -> ChunkResult:
        """Store what `extract_paths` found (here or in a worker process)."""
        written: list[Indexed] = []
        touched: list[tuple[str, FileStamp]] = []
        gone: list[str] = []
        for item in extracted:
            if item.stat is None:
                gone.append(item.path)
            elif item.tags is None:
                record = FileStamp(
                    item.stat.mtime_ns, item.stat.size, item.digest, item.checked_ns,
                    item.extractor,
                )  # fmt: skip
                touched.append((item.path, record))
            else:
                written.append(
                    Indexed(item.path, item.stat, item.digest, item.checked_ns, item.extractor,
                            item.tags)
                )  # fmt: skip
        store = self.store
        if written:
            store.write(written)
        if touched:
            store.touch(
                [(path, StatEntry(r.mtime_ns, r.size), r.checked_ns) for path, r in touched]
            )
        self._forget(gone)
        with self._lock:
            for item in written:
                self._records[item.path] = FileStamp(
                    item.stat.mtime_ns, item.stat.size, item.digest, item.checked_ns,
                    item.extractor,
                )  # fmt: skip
                self._summaries[item.path] = FileSummary.of(
                    (definition.name for definition in item.tags.definitions),
                    item.tags.references,
                )
            for path, record in touched:
                self._records[path] = record
            if written or gone:
                self._version += 1
        return ChunkResult(parsed=len(written), unchanged=len(touched), removed=len(gone))

    def remove(self, paths: Iterable[str]) -> None:
        self._forget(list(paths))

    def _forget(self, paths: list[str]) -> None:
        if not paths:
            return
        self.store.delete(paths)
        with self._lock:
            for path in paths:
                self._records.pop(path, None)
                self._summaries.pop(path, None)
            self._version += 1

    # ------------------------------------------------------------------ queries

    def graph(self, *, stale_ok: bool = False) -> RepoGraph:
        """The reference graph of what is indexed now, rebuilt if anything changed; with
        `stale_ok`, the last one built if there is one (queries: the rebuild after a change is
        the refresh's, and takes a second or two for 20,000 files)."""
        if stale_ok:
            with self._lock:
                if self._graph is not None:
                    return self._graph
        with self._graph_lock:
            with self._lock:
                version = self._version
                if self._graph is not None and self._graph_version == version:
                    return self._graph
                summaries = dict(self._summaries)
            graph = build_graph(summaries)
            with self._lock:
                self._graph, self._graph_version = graph, version
            return graph

    def relative(self, path: Path | str) -> str | None:
        """`path` (absolute, or relative to the root) as the index names it, or None outside."""
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        try:
            return candidate.resolve(strict=False).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def repo_map(
        self,
        *,
        budget: int,
        conversation: Sequence[Path | str] = (),
        query: str = "",
        visible: Visible | None = None,
    ) -> MapResult:
        """The map within `budget` tokens: the conversation's files' definitions first, then
        the rest ranked by PageRank personalised to the conversation and the query's hits."""
        graph = self.graph(stale_ok=True)
        shown: Visible = visible or _everything
        first = [
            graph.number[relative]
            for item in conversation
            if (relative := self.relative(item)) in graph.number and shown(relative)
        ]
        seeds = dict.fromkeys(first, 1.0)
        words = query_terms(query)
        hits: set[int] = set()
        for path, score in self.store.search(words, QUERY_SEEDS) if words else ():
            node = graph.number.get(path)
            if node is not None:
                hits.add(node)
                seeds[node] = seeds.get(node, 0.0) + score / (score + 1.0)
        mentioned = set(words)

        def boosted(name: str) -> bool:
            # The whole name in the query, or every word of a compound name.
            terms = identifier_terms(name)
            if not terms:
                return False
            return terms[0] in mentioned or (len(terms) > 1 and mentioned.issuperset(terms[1:]))

        # About 12 tokens a definition line: enough candidates for the budget, and some over
        # for the ones `visible` hides.
        limit = max(budget // 8, 16)
        ranked = ranked_definitions(
            graph,
            seeds=seeds,
            first=first,
            boosted=boosted if hits else None,
            boost_in=frozenset(hits),
            limit=limit + 32,
        )
        ranked = [item for item in ranked if shown(item[0])][:limit]
        definitions = self.store.definitions(path for path, _name in ranked)
        text, count = fit_to_budget(
            len(ranked), lambda n: render_map(ranked[:n], definitions), budget
        )
        files = len({path for path, _name in ranked[:count]})
        total = sum(len(names) for names in graph.names)
        return MapResult(text=text, definitions=count, files=files, total_definitions=total)

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        conversation: Sequence[Path | str] = (),
        visible: Visible | None = None,
    ) -> list[SearchHit]:
        """Files matching `query`: BM25 over names, paths and identifiers' terms, plus a share
        for the file's structural rank (global, and near the conversation's files)."""
        words = query_terms(query)
        if not words:
            return []
        shown: Visible = visible or _everything
        hits = [hit for hit in self.store.search(words, max(50, limit * 5)) if shown(hit[0])]
        if not hits:
            return []
        graph = self.graph(stale_ok=True)
        best = hits[0][1] or 1.0
        top_rank = max(graph.rank, default=0.0) or 1.0
        seeds = {
            graph.number[relative]: 1.0
            for item in conversation
            if (relative := self.relative(item)) in graph.number
        }
        near = personalized(graph, seeds) if seeds else {}
        top_near = max(near.values(), default=0.0) or 1.0
        scored: list[tuple[float, str]] = []
        for path, bm25 in hits:
            node = graph.number.get(path)
            structural = 0.0
            if node is not None:
                structural = 0.2 * (graph.rank[node] / top_rank) ** 0.5
                structural += 0.2 * near.get(node, 0.0) / top_near
            scored.append((bm25 / best + structural, path))
        scored.sort(key=lambda item: (-item[0], item[1]))
        chosen = scored[:limit]
        definitions = self.store.definitions(path for _score, path in chosen)
        wanted = set(words)
        return [
            SearchHit(
                path=path,
                score=round(score, 4),
                definitions=_matching(definitions.get(path, ()), wanted),
            )
            for score, path in chosen
        ]


def _everything(path: str) -> bool:
    return True


def _matching(definitions: Sequence[Definition], wanted: set[str]) -> tuple[Definition, ...]:
    """The definitions whose name shares a term with the query, the closest matches first."""
    scored: list[tuple[int, int, Definition]] = []
    for definition in definitions:
        terms = identifier_terms(definition.name)
        if not terms:
            continue
        exact = terms[0] in wanted
        overlap = len(wanted.intersection(terms))
        if exact or overlap:
            scored.append((-(overlap + (10 if exact else 0)), definition.line, definition))
    scored.sort(key=lambda item: (item[0], item[1]))
    return tuple(definition for _score, _line, definition in scored)
