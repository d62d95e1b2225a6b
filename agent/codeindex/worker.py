"""A worker process for a large refresh: `python -m agent.codeindex.worker ROOT`.

Reads one JSON request per line on stdin, `{"paths": [...], "known": {path: [digest hex,
extractor]}}`, and answers each with one line, `{"results": [...]}` (rows of
`agent.codeindex.extraction.encode`). Ends at the end of its input. Started by
`agent.codeindex.workers`; nothing else speaks to it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from agent.codeindex.extraction import encode, extract_paths


def main() -> None:
    root = Path(sys.argv[1])
    output = sys.stdout.buffer
    for line in sys.stdin.buffer:
        request = orjson.loads(line)
        known = {path: (bytes.fromhex(pair[0]), pair[1]) for path, pair in request["known"].items()}
        results = [encode(item) for item in extract_paths(root, request["paths"], known)]
        output.write(orjson.dumps({"results": results}) + b"\n")
        output.flush()


if __name__ == "__main__":
    main()
