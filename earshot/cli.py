"""The `earshot` command line."""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = """usage: earshot --stdio     serve ACP (the Agent Client Protocol) on stdin/stdout
       earshot acp         the same
       earshot --version"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--stdio", "acp"):
        from earshot.acp_main import run_stdio

        return run_stdio()
    if args and args[0] in ("--version", "-V"):
        from earshot import __version__

        print(f"earshot {__version__}")
        return 0
    print(USAGE, file=sys.stderr)
    return 2
