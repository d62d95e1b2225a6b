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
        "from agent.tools.builtin import builtin_tools\n"
        "tools = builtin_tools()\n"
        "before = [t.name for t in tools if t.input_model.__pydantic_complete__]\n"
        "schema = tools[0].input_schema\n"
        "after = tools[0].input_model.__pydantic_complete__\n"
        "print(json.dumps({'built': before, 'pathspec': 'pathspec' in sys.modules,\n"
        "                  'schema': schema['type'], 'after': after}))\n"
    )
    assert json.loads(out) == {"built": [], "pathspec": False, "schema": "object", "after": True}
