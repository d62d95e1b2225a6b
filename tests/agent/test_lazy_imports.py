"""The session machinery imports no more than it needs: an editor's first `session/new` waits for
these imports. Each check runs in a fresh interpreter (this process has imported everything)."""

from __future__ import annotations

import json
import subprocess
import sys


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_session_path_does_not_import_structlog() -> None:
    out = _run(
        "import sys, json\n"
        "import agent.session, agent.settings, agent.local, sessions\n"
        "print(json.dumps([m for m in ('structlog', 'rich') if m in sys.modules]))\n"
    )
    assert json.loads(out) == []


def test_tool_input_models_are_built_at_first_use() -> None:
    out = _run(
        "import sys, json\n"
        "import agent.session\n"
        "from agent.tools import builtin_tools\n"
        "tools = builtin_tools()\n"
        "before = [t.name for t in tools if t.input_model.__pydantic_complete__]\n"
        "schema = tools[0].input_schema\n"
        "after = tools[0].input_model.__pydantic_complete__\n"
        "print(json.dumps({'built': before, 'pathspec': 'pathspec' in sys.modules,\n"
        "                  'schema': schema['type'], 'after': after}))\n"
    )
    assert json.loads(out) == {"built": [], "pathspec": False, "schema": "object", "after": True}


def test_the_configuration_runs_before_the_first_agent_log_line() -> None:
    out = _run(
        "import sys, json\n"
        "from agent._log import configure_before_first_use, get_logger\n"
        "calls = []\n"
        "def configure():\n"
        "    import structlog\n"
        "    calls.append('configured')\n"
        "    structlog.configure(processors=[structlog.processors.JSONRenderer()],\n"
        "                        logger_factory=structlog.PrintLoggerFactory(file=sys.stdout))\n"
        "log = get_logger('agent.test')\n"
        "configure_before_first_use(configure)\n"
        "configure_before_first_use(configure)\n"
        "assert 'structlog' not in sys.modules\n"
        "log.warning('first', n=1)\n"
        "log.warning('second', n=2)\n"
        "late = []\n"
        "configure_before_first_use(lambda: late.append(True))\n"
        "print(json.dumps({'calls': calls, 'late': late}))\n"
    )
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0] == {"event": "first", "n": 1}
    assert lines[1] == {"event": "second", "n": 2}
    assert lines[2] == {"calls": ["configured"], "late": [True]}
