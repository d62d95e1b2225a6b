"""One lock for the worker threads that import big packages: the model's SDK in the ACP warm-up
(`earshot.acp_main`), the MCP SDK (`earshot.mcp_connections`). Two threads importing packages
that share dependencies at once can each meet a module the other has half-imported (Python's
deadlock detection then hands one of them a partial module), so they take turns."""

from __future__ import annotations

import threading

IMPORTS = threading.Lock()

__all__ = ["IMPORTS"]
