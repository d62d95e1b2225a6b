"""`python -m earshot`: the ACP server is dispatched before the CLI module is even imported."""

import sys

if sys.argv[1:2] in (["--stdio"], ["acp"]):
    from earshot.acp_main import run_stdio

    raise SystemExit(run_stdio())

from earshot.cli import main

raise SystemExit(main())
