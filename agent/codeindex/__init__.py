"""The code index: definitions and references per file, a reference graph ranked with PageRank,
a repository map rendered to a token budget, and BM25 search over identifiers and text.

Nothing here is imported on the way to an editor's first `session/new`: tree-sitter, its
grammars and sqlite load when an index is first opened (`agent.codeindex.index.CodeIndex`), in
a worker thread. The modules:

- `languages`: file extension -> tree-sitter grammar and its own tags query; extraction of one
  file's definitions, references and search terms (`extract`).
- `terms`: identifier splitting (camelCase, snake_case) shared by extraction and search.
- `files`: which files to index (what git, or ripgrep, lists: ignored files are skipped).
- `store`: the on-disk cache under the data dir (sqlite, with an FTS5 table for BM25).
- `graph`: the reference graph and PageRank (power iteration, and local push for a
  personalised rank).
- `render`: the map text, fitted to a token budget.
- `index`: `CodeIndex`, which ties them together: incremental refresh in chunks (never blocking
  the event loop), `repo_map`, `search`.

See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.codeindex.index import CodeIndex, default_database, initial_map, map_header
    from agent.codeindex.render import clean

__all__ = [
    "CodeIndex",
    "clean",
    "default_database",
    "initial_map",
    "map_header",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "index": ("CodeIndex", "default_database", "initial_map", "map_header"),
            "render": ("clean",),
        },
    )
