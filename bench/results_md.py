"""Writing one benchmark's `## <name>` section of bench/RESULTS.md, leaving the others as they are.

Imported as `bench.results_md` by the benchmarks run as modules (`python -m bench.loop`) and as
`results_md` by the ones run as scripts (`python bench/acp.py`, whose directory is on sys.path).
"""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(section: str, body: str, results: Path = RESULTS) -> None:
    """Replace the lines from `section` (e.g. `## loop`) to the next `## ` heading with `body`, or
    append `body` when the section is new."""
    text = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n"
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == section), None)
    if start is None:
        before, after = lines, []
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        before, after = lines[:start], lines[end:]
    while before and not before[-1].strip():
        before.pop()
    updated = "\n".join([*before, "", *body.strip("\n").splitlines(), "", *after])
    results.write_text(updated.rstrip("\n") + "\n", encoding="utf-8")
