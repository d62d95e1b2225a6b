"""`sessions._log`: structlog is imported, and configured by the front end, at the first warning."""

from __future__ import annotations

import json
import subprocess
import sys

CODE = """
import sys, json
from sessions._log import configure_before_first_use, warn
calls = []
def configure():
    import structlog
    calls.append("configured")
    structlog.configure(processors=[structlog.processors.JSONRenderer()],
                        logger_factory=structlog.PrintLoggerFactory(file=sys.stdout))
configure_before_first_use(configure)
imported_early = "structlog" in sys.modules
warn("torn line", line=3)
print(json.dumps({"calls": calls, "imported_early": imported_early}))
"""


def test_the_first_warning_configures_structlog_first() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first == {"event": "torn line", "line": 3}
    assert second == {"calls": ["configured"], "imported_early": False}
