"""The reference graph of a work tree and its PageRank, after aider's repo map.

Nodes are files. For every identifier some file defines, each file that mentions it gets an edge
to each file that defines it, weighted like aider's: `sqrt(mentions)`, times 10 for a long
compound name (`load_settings`, `TokenCounter`: specific), 0.1 for a private one (`_helper`),
0.1 for a name more than five files define (`run`, `get`), and 0.3 for a one-word lowercase
name (`path`: as often a local variable or a word in a comment). A name more than `MAX_DEFINERS`
files define carries no structure at all (`__init__`, `main`) and adds no edges: without that
cut one such name in a 20,000-file tree would add millions. A file's mentions of names it
defines itself are not edges.

PageRank then says which files the rest of the tree leans on. Two ways to compute it, both plain
Python over adjacency lists (networkx costs a quarter of a second to import and builds a dict of
dicts per edge; numpy and scipy are not otherwise needed):

- `pagerank`: power iteration, for the global rank, computed once per graph in the background
  (about 35 ms an iteration for 20,000 files and 300,000 edges);
- `personalized`: the local push of Andersen, Chung and Lang (2006) from the files a
  conversation is about, which touches only their neighbourhood: its work is bounded by
  1 / (epsilon * alpha) pushes whatever the size of the tree, so a personalised rank costs
  milliseconds where a power iteration would cost a second (epsilon 1e-4: about 1 ms from one
  file of this repository, with the same top files as at 1e-5, which takes 50 ms).

Definitions are then ranked by their file's rank, split among the names a file defines in
proportion to how much the rest of the tree refers to each (`shares`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from agent.codeindex.store import FileSummary

MAX_DEFINERS: Final = 25
"""A name defined in more files than this adds no edges."""
DAMPING: Final = 0.85
UNREFERENCED_SHARE: Final = 0.05
"""What a definition nobody refers to gets of its file's rank (among its file's others)."""


@dataclass(frozen=True, slots=True)
class RepoGraph:
    """The graph, as adjacency lists over file numbers, and what ranking needs."""

    paths: tuple[str, ...]
    number: dict[str, int]
    targets: tuple[tuple[int, ...], ...]
    """Out-edges of each file: the files defining what it mentions."""
    weights: tuple[tuple[float, ...], ...]
    """Edge weights, normalised to sum to 1 per file."""
    names: tuple[tuple[str, ...], ...]
    """The names each file defines (distinct, in order)."""
    shares: tuple[dict[str, float], ...]
    """Per file: each defined name's share of the references the file receives (missing: 0)."""
    rank: tuple[float, ...]
    """Global PageRank (sums to 1)."""
    by_rank: tuple[int, ...]
    """File numbers, highest global rank first."""
    edge_count: int


def build_graph(summaries: Mapping[str, FileSummary]) -> RepoGraph:
    """The graph of the files in `summaries`, with its global rank."""
    paths = tuple(sorted(summaries))
    number = {path: index for index, path in enumerate(paths)}
    definers: dict[str, list[int]] = {}
    names: list[tuple[str, ...]] = []
    for index, path in enumerate(paths):
        distinct = tuple(dict.fromkeys(summaries[path].names))
        names.append(distinct)
        for name in distinct:
            definers.setdefault(name, []).append(index)
    # Names defined in too many files carry no structure: left out before the loop.
    usable = frozenset(name for name, files in definers.items() if len(files) <= MAX_DEFINERS)
    multiplier: dict[str, float] = {}
    edges: list[dict[int, float]] = [{} for _ in paths]
    received: list[dict[str, float]] = [{} for _ in paths]
    for source, path in enumerate(paths):
        summary = summaries[path]
        # Most identifiers (locals, keywords, words in comments) are defined nowhere: the set
        # intersection drops them in C before the Python loop sees them.
        common = usable.intersection(summary.references)
        if not common:
            continue
        counts = dict(zip(summary.references, summary.counts, strict=True))
        out = edges[source]
        for name in common:
            files = definers[name]
            factor = multiplier.get(name)
            if factor is None:
                factor = multiplier[name] = _multiplier(name, len(files))
            weight = factor * math.sqrt(counts[name])
            for target in files:
                if target != source:
                    out[target] = out.get(target, 0.0) + weight
                    got = received[target]
                    got[name] = got.get(name, 0.0) + weight
    targets: list[tuple[int, ...]] = []
    weights: list[tuple[float, ...]] = []
    edge_count = 0
    for out in edges:
        total = sum(out.values())
        targets.append(tuple(out))
        weights.append(tuple(weight / total for weight in out.values()) if total else ())
        edge_count += len(out)
    shares = tuple(_normalised(got) for got in received)
    rank = pagerank(targets, weights)
    return RepoGraph(
        paths=paths,
        number=number,
        targets=tuple(targets),
        weights=tuple(weights),
        names=tuple(names),
        shares=shares,
        rank=tuple(rank),
        by_rank=tuple(sorted(range(len(paths)), key=lambda node: (-rank[node], node))),
        edge_count=edge_count,
    )


def _multiplier(name: str, definer_count: int) -> float:
    multiplier = 1.0
    compound = "_" in name.strip("_") or (name.lower() != name and name.upper() != name)
    if compound and len(name) >= 8:
        multiplier *= 10.0
    elif not compound and name.islower():
        # `path`, `message`, `decide`: as often a local variable or a word in a comment as a
        # use of the definition (references here are every identifier, not only calls).
        multiplier *= 0.3
    if name.startswith("_"):
        multiplier *= 0.1
    if definer_count > 5:
        multiplier *= 0.1
    return multiplier


def _normalised(values: dict[str, float]) -> dict[str, float]:
    total = sum(values.values())
    return {key: value / total for key, value in values.items()} if total else {}


def pagerank(
    targets: list[tuple[int, ...]] | tuple[tuple[int, ...], ...],
    weights: list[tuple[float, ...]] | tuple[tuple[float, ...], ...],
    *,
    damping: float = DAMPING,
    iterations: int = 60,
    tolerance: float = 1e-7,
) -> list[float]:
    """Global PageRank by power iteration; a file without out-edges spreads its rank evenly."""
    count = len(targets)
    if count == 0:
        return []
    rank = [1.0 / count] * count
    for _ in range(iterations):
        dangling = sum(rank[node] for node in range(count) if not targets[node])
        base = (1.0 - damping + damping * dangling) / count
        new = [base] * count
        for node in range(count):
            share = rank[node] * damping
            if share:
                for target, weight in zip(targets[node], weights[node], strict=True):
                    new[target] += share * weight
        change = sum(abs(a - b) for a, b in zip(new, rank, strict=True))
        rank = new
        if change < tolerance * count:
            break
    return rank


def personalized(
    graph: RepoGraph, seeds: Mapping[int, float], *, alpha: float = 1.0 - DAMPING,
    epsilon: float = 1e-4,
) -> dict[int, float]:  # fmt: skip
    """Approximate PageRank personalised to `seeds` (file number -> weight), by local push:
    the result differs from the exact one by less than `epsilon` times each file's degree."""
    total = sum(seeds.values())
    if total <= 0:
        return {}
    rank: dict[int, float] = {}
    residual = {node: weight / total for node, weight in seeds.items()}
    queue = list(residual)
    targets, weights = graph.targets, graph.weights
    while queue:
        node = queue.pop()
        mass = residual.get(node, 0.0)
        degree = len(targets[node]) or 1
        if mass < epsilon * degree:
            continue
        rank[node] = rank.get(node, 0.0) + alpha * mass
        residual[node] = 0.0
        spread = (1.0 - alpha) * mass
        for target, weight in zip(targets[node], weights[node], strict=True):
            before = residual.get(target, 0.0)
            after = before + spread * weight
            residual[target] = after
            threshold = epsilon * (len(targets[target]) or 1)
            if before < threshold <= after:
                queue.append(target)
    return rank


def ranked_definitions(
    graph: RepoGraph,
    *,
    seeds: Mapping[int, float],
    first: Iterable[int] = (),
    boosted: Callable[[str], bool] | None = None,
    boost_in: frozenset[int] = frozenset(),
    limit: int,
) -> list[tuple[str, str]]:
    """`(path, name)` of the best `limit` definitions: first every definition of the files in
    `first` (the conversation's, in their order), then the others by their file's rank
    (personalised to `seeds` when there are any) times the name's share, times 10 for a name
    `boosted` accepts (one the query mentions) in a file of `boost_in` (the query's hits).

    A definition never scores above its file's rank (times 10 when boosted), so files are
    visited best first and the walk stops at the first file that cannot place: the work is
    about `limit` definitions, not every definition of the tree."""
    ordered: list[tuple[str, str]] = []
    firsts = list(dict.fromkeys(first))
    for node in firsts:
        shares = graph.shares[node]
        names = sorted(graph.names[node], key=lambda name: -shares.get(name, 0.0))
        ordered.extend((graph.paths[node], name) for name in names)
    wanted = limit - len(ordered)
    if wanted <= 0:
        return ordered[:limit]
    skip = set(firsts)
    unvisited_boost = set(boost_in) if boosted is not None else set[int]()
    best: list[tuple[float, str, str]] = []  # a min-heap of the `wanted` best so far
    for node, rank in _by_file_rank(graph, seeds):
        ceiling = 10.0 if unvisited_boost else 1.0
        if len(best) >= wanted and rank * ceiling <= best[0][0]:
            break
        boost = node in unvisited_boost
        unvisited_boost.discard(node)
        names = graph.names[node]
        if node in skip or not names:
            continue
        shares = graph.shares[node]
        # The file's rank, split among its names by share (plus a little for every name, so
        # that one nobody refers to still orders after its siblings, not after everything).
        even = UNREFERENCED_SHARE / len(names)
        scale = rank / ((1.0 if shares else 0.0) + UNREFERENCED_SHARE)
        path = graph.paths[node]
        for name in names:
            score = scale * (shares.get(name, 0.0) + even)
            if boost and boosted is not None and boosted(name):
                score *= 10.0
            # Ties keep the earlier path and name: negated order inside the min-heap.
            item = (score, path, name)
            if len(best) < wanted:
                heapq.heappush(best, item)
            elif score > best[0][0]:
                heapq.heapreplace(best, item)
    best.sort(key=lambda item: (-item[0], item[1], item[2]))
    ordered.extend((path, name) for _score, path, name in best)
    return ordered


def _by_file_rank(graph: RepoGraph, seeds: Mapping[int, float]) -> Iterator[tuple[int, float]]:
    """Every file with its rank, best first: the global rank, or with seeds the personalised
    one, and after the files the push reached, the rest by global rank far below them."""
    if not seeds:
        for node in graph.by_rank:
            yield node, graph.rank[node]
        return
    local = personalized(graph, seeds)
    floor = 0.1 * min(local.values(), default=0.0)
    top_global = graph.rank[graph.by_rank[0]] or 1.0
    reached = sorted(
        local,
        key=lambda node: (-(local[node] + floor * graph.rank[node] / top_global), node),
    )
    for node in reached:
        yield node, local[node] + floor * graph.rank[node] / top_global
    for node in graph.by_rank:
        if node not in local:
            yield node, floor * graph.rank[node] / top_global
