"""The `earshot` command line."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--version", "-V"):
        from earshot import __version__

        print(f"earshot {__version__}")
        return 0
    print("usage: earshot --version", file=sys.stderr)
    return 2
