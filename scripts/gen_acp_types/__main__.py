"""Rewrite the generated modules, or (`--check`) only say which ones differ.

.venv/bin/python -m scripts.gen_acp_types           # rewrite what differs
.venv/bin/python -m scripts.gen_acp_types --check   # exit 1 if a committed module differs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.gen_acp_types.modules import OUTPUT_DIR, generate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.gen_acp_types")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 on a diff")
    args = parser.parse_args(argv)
    sources = generate()
    stale = [n for n, text in sources.items() if read_or_empty(OUTPUT_DIR / n) != text]
    if args.check:
        for name in stale:
            print(f"{OUTPUT_DIR / name}: differs from what the schema generates", file=sys.stderr)
        return 1 if stale else 0
    for name in stale:
        (OUTPUT_DIR / name).parent.mkdir(parents=True, exist_ok=True)
        (OUTPUT_DIR / name).write_text(sources[name], encoding="utf-8")
        print(f"wrote {OUTPUT_DIR / name}", file=sys.stderr)
    return 0


def read_or_empty(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


if __name__ == "__main__":
    raise SystemExit(main())
