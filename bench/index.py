"""Code index benchmarks; writes the `## index` section of bench/RESULTS.md.

Run from the repo root as a module: `.venv/bin/python -m bench.index` (`--no-write` only prints,
`--files N` changes the generated tree's size, default 20,000).

Targets (issue 18): cold index of a 20,000-file tree under 60 s on 2 cores, an incremental
update under 1 s, rendering a 2,000-token map under 100 ms. Measured on this repository and on
a generated tree (`bench/index_tree.py`), each with a fresh cache: cold refresh, a refresh with
nothing changed, a refresh after one file changed (the index update) and the graph rebuild that
follows it, and the map at 2,000 tokens (global, centred on one file, centred on a query), and
a search. Also: import costs, each the best of 5 fresh interpreters.
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from bench.index_tree import generate
from bench.results_md import write_section

SECTION = "## index"
ROOT = Path(__file__).resolve().parent.parent
BUDGET = 2_000

IMPORTS: dict[str, tuple[str, str]] = {
    # name: (imported before the clock starts, what is timed)
    "`agent.codeindex.index` (what a session imports)": (
        "import anyio",
        "import agent.codeindex.index",
    ),
    "`agent.tools.code_index` (both tools), beyond `agent.tools`": (
        "import agent.tools",
        "import agent.tools.code_index",
    ),
    "`agent.codeindex.engine` (sqlite3, the store), beyond the index module": (
        "import agent.codeindex.index",
        "import agent.codeindex.engine",
    ),
    "tree-sitter and all ten grammars, queries built": (
        "import agent.codeindex.languages as languages",
        "assert all(languages.grammar_available(name) for name in languages.GRAMMARS)",
    ),
    "`agent.lsp.manager` (no lsprotocol yet)": ("import anyio", "import agent.lsp.manager"),
    "`lsprotocol.types` + its converter (first server start)": (
        "import anyio",
        "from lsprotocol import types\nfrom lsprotocol.converters import get_converter\n"
        "get_converter()",
    ),
    "`agent.code.verify`": ("pass", "import agent.code.verify"),
    "`agent.settings.code` (on the settings path)": (
        "import agent.settings.schema",
        "import agent.settings.code",
    ),
}


def import_cost(setup: str, code: str, runs: int = 5) -> float:
    """Best wall time, in ms, of `code` in a fresh interpreter that has run `setup` first."""

    def once() -> float:
        script = f"{setup}\nimport time\n_t = time.perf_counter()\n{code}\n"
        script += "print(time.perf_counter() - _t)"
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
        )
        return float(out.stdout.strip().splitlines()[-1]) * 1_000

    return min(once() for _ in range(runs))


def _cpu_seconds() -> float:
    """CPU time of this process (all threads) and of its children that have ended (the
    refresh's worker processes, and git)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def measure(
    root: Path, database: Path, changed: Path, conversation: str, query: str
) -> dict[str, str]:
    from agent.codeindex import CodeIndex

    index = CodeIndex(root, database=database)
    cpu_before = _cpu_seconds()
    started = time.perf_counter()
    cold = await index.refresh()
    cold_seconds = time.perf_counter() - started
    cold_cpu = _cpu_seconds() - cpu_before
    assert cold.error is None, cold.error
    warm = await index.refresh()
    # One file changed (dated back, so nothing else counts as racy).
    added = "\n\ndef bench_added_function():\n    return 1\n"
    changed.write_text(changed.read_text(encoding="utf-8") + added, encoding="utf-8")
    past = time.time() - 120
    os.utime(changed, (past, past))
    engine = index.engine
    started = time.perf_counter()
    plan = await anyio.to_thread.run_sync(engine.plan)
    result = await anyio.to_thread.run_sync(engine.process, plan.changed)
    update = time.perf_counter() - started
    assert result.parsed == 1, result
    started = time.perf_counter()
    graph = await anyio.to_thread.run_sync(engine.graph)
    rebuild = time.perf_counter() - started
    maps: dict[str, list[float]] = {"global": [], "conversation": [], "query": []}
    for _ in range(7):
        for kind, kwargs in (
            ("global", {}),
            ("conversation", {"conversation": [conversation]}),
            ("query", {"query": query}),
        ):
            started = time.perf_counter()
            rendered = await index.repo_map(budget=BUDGET, **kwargs)  # type: ignore[arg-type]
            maps[kind].append((time.perf_counter() - started) * 1_000)
            assert rendered.text
    searches: list[float] = []
    for _ in range(7):
        started = time.perf_counter()
        hits = await index.search(query)
        searches.append((time.perf_counter() - started) * 1_000)
        assert hits
    size = engine.store.size_bytes()
    await index.aclose()
    return {
        "files indexed": f"{cold.listed:,} ({graph.edge_count:,} graph edges)",
        "cold refresh (list, parse, store, graph): wall": f"{cold_seconds:.1f} s",
        "cold refresh: CPU time, this process and its workers": (
            f"{cold_cpu:.1f} s ({index.workers} worker processes)"
        ),
        "refresh, nothing changed": f"{warm.seconds * 1_000:.0f} ms",
        "incremental update, one file changed (list, stat, parse, store)": (
            f"{update * 1_000:.0f} ms"
        ),
        "graph rebuild after it (in the background; queries use the last graph)": (
            f"{rebuild * 1_000:.0f} ms"
        ),
        f"map at {BUDGET:,} tokens, global rank: median": (
            f"{statistics.median(maps['global']):.0f} ms"
        ),
        f"map at {BUDGET:,} tokens, centred on a file: median": (
            f"{statistics.median(maps['conversation']):.0f} ms"
        ),
        f"map at {BUDGET:,} tokens, centred on a query: median": (
            f"{statistics.median(maps['query']):.0f} ms"
        ),
        "search_code query: median": f"{statistics.median(searches):.0f} ms",
        "cache on disk": f"{size / 1e6:.0f} MB",
    }


async def bench(files: int) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    imports = {name: f"{import_cost(*codes):.0f} ms" for name, codes in IMPORTS.items()}
    with tempfile.TemporaryDirectory(prefix="earshot-index-bench-") as scratch:
        base = Path(scratch)
        # This repository, as a copy (the change must not touch the work tree).
        copy = base / "repo"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(copy), "HEAD"], cwd=ROOT, check=True
        )
        try:
            own = await measure(
                copy,
                base / "own.sqlite",
                copy / "agent" / "context" / "tokens.py",
                "agent/turn/loop.py",
                "permission gate decide",
            )
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(copy)], cwd=ROOT, check=True
            )
        tree = base / "tree"
        tree.mkdir()
        written = [path for path in generate(tree, files) if path.suffix == ".py"]
        subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
        generated = await measure(
            tree,
            base / "tree.sqlite",
            written[len(written) // 2],
            written[len(written) // 3].relative_to(tree).as_posix(),
            "compute render",
        )
    return imports, own, generated


def table(rows: dict[str, str]) -> list[str]:
    return [
        "| measure | result |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in rows.items()),
    ]


def main() -> None:
    files = int(sys.argv[sys.argv.index("--files") + 1]) if "--files" in sys.argv else 20_000
    load_before = os.getloadavg()
    imports, own, generated = anyio.run(bench, files)
    load_after = os.getloadavg()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    machine = (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    body = "\n".join(
        [
            SECTION,
            "",
            f"`python -m bench.index` on {machine}, {time.strftime('%Y-%m-%d')}. Load average",
            f"{load_before[0]:.1f} at the start and {load_after[0]:.1f} at the end (1-minute;",
            "other helpers' test suites share the 2 CPUs, so every figure here is inflated).",
            f"Peak RSS of the benchmark process {peak:.0f} MB. Targets: cold index of 20,000 files",
            "under 60 s, incremental update under 1 s, a 2,000-token map under 100 ms.",
            "",
            "Import costs (best of 5 fresh interpreters, wall, beyond what is named):",
            "",
            *table(imports),
            "",
            "This repository (a detached worktree of HEAD):",
            "",
            *table(own),
            "",
            f"A generated tree of {files:,} files (`bench/index_tree.py`: 70% Python, 20%",
            "TypeScript, 10% Go, about 100 lines each, Zipf-skewed imports):",
            "",
            *table(generated),
            "",
            "Reading the figures: the cold refresh's CPU time is what it costs an idle machine;",
            "its wall time here is stretched by the load (two worker processes parse while this",
            "process stores, so on 2 idle cores the wall is about half the CPU time). The graph",
            "rebuild after a change runs in the refresh's worker thread; maps and searches",
            "meanwhile use the last graph (search finds a new file's names at once, from the",
            "full-text index). The map times include ranking (PageRank personalised by local",
            "push from the file or the query's search hits) and fitting to the budget; the",
            "query row includes that search.",
            "",
            "Alternatives measured on this machine (2026-12-03, best of 3 fresh interpreters, load",
            "5-8): `bm25s` 80 ms plus numpy 120 ms to import, and it rebuilds its index for any",
            "change (SQLite FTS5, in the standard library, updates per file); `pygls`'s client",
            "285 ms against `lsprotocol`'s 220 ms (and asyncio-only); `networkx` not needed (the",
            "power iteration and local push are 60 lines). `tree-sitter-language-pack` 1.x",
            "downloads its parsers from GitHub on first use, which fails here (no network beyond",
            "the registries); 0.13, the last release bundling them, unpacks to 190 MB.",
        ]
    )
    print(body)
    if "--no-write" not in sys.argv:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
