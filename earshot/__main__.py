"""`python -m earshot`: the ACP server is dispatched before the CLI module is even imported
(only for exactly `--stdio` or `acp`: anything more goes to the CLI, which answers or refuses)."""

import sys

if sys.argv[1:] in (["--stdio"], ["acp"]):
    from earshot.acp_main import run_stdio

    raise SystemExit(run_stdio())

from earshot.cli import main

raise SystemExit(main())
